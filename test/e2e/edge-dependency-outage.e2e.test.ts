import { INestApplication } from '@nestjs/common';
import { loadEdgeConfig } from '@tollgate/config';
import { QueueName } from '@tollgate/queue';
import { adminDatabaseUrl, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdgeApp } from '../../apps/mcp-edge/src/edge-app';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { OwnRedis, TcpProxy, startOwnRedis, startTcpProxy } from '../support/outages';
import { RunningPlatform, startPlatform } from '../support/platform';

type RpcAnswer = {
  id?: unknown;
  result?: { isError?: boolean; content: { text: string }[] };
  error?: { code: number; message: string; data?: { retryAfterSeconds?: number; dependency?: string } };
};

/**
 * A dependency outage is not the agent's fault: with Redis or Postgres down the edge answers 503
 * with Retry-After and a JSON-RPC error carrying the retry hint, never 500, and keeps running.
 * Redis is a redis-server of this test's own; Postgres is reached through a proxy this test closes.
 */
describe('edge: Redis or Postgres down', () => {
  let redis: OwnRedis;
  let pgProxy: TcpProxy;
  let p: RunningPlatform;
  let proxiedEdge: INestApplication;
  let proxiedEdgeUrl: string;
  let upstream: FixtureServer;
  const keys: string[] = [];
  let sessionId: string;

  const post = (url: string, key: string, body: unknown) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${key}`,
      },
      body: JSON.stringify(body),
    });
  const toolsCall = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'fx__ping', arguments: {} },
  });
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };

  async function expectUnavailable(res: Response, dependency: string, id: unknown): Promise<void> {
    const text = await res.text();
    expect(res.status, text).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    const body = JSON.parse(text) as RpcAnswer;
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id,
      error: { code: -32603, data: { dependency, retryAfterSeconds: Number(res.headers.get('retry-after')) } },
    });
    expect(body.error!.message).toMatch(/unavailable/i);
  }

  beforeAll(async () => {
    // Persistent, so Redis comes back with its data: this test is about the outage, not data loss.
    redis = await startOwnRedis({ persist: true });
    p = await startPlatform({ REDIS_URL: redis.url });
    pgProxy = await startTcpProxy(
      Number(new URL(adminDatabaseUrl()).port || 5432),
      new URL(adminDatabaseUrl()).hostname,
    );
    const proxiedDb = new URL(p.env.vars.DATABASE_URL);
    proxiedDb.hostname = '127.0.0.1';
    proxiedDb.port = String(pgProxy.port);
    proxiedEdge = await createEdgeApp(loadEdgeConfig({ ...p.env.vars, DATABASE_URL: proxiedDb.toString() }));
    await proxiedEdge.listen(0, '127.0.0.1');
    proxiedEdgeUrl = (await proxiedEdge.getUrl()).replace('[::1]', '127.0.0.1');

    upstream = await startFixtureServer();
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Outage', slug: 'outage' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'o@acme.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    for (const name of ['seen', 'unseen'])
      keys.push((await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name })).body.secret);
    const up = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'fx',
      transport: 'STREAMABLE_HTTP',
      url: upstream.url,
      callTimeoutMs: 10_000,
    });
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${up.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fx:*'], deny: [] });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId: up.body.id,
      toolPattern: '*',
      perCallMicros: 1_000,
    });
    const opened = await post(p.edgeUrl, keys[0], initialize);
    sessionId = opened.headers.get('mcp-session-id')!;
    expect(sessionId).toBeTruthy();
    // Both edges know the first key, its catalog and policy; neither has seen the second key.
    for (const url of [p.edgeUrl, proxiedEdgeUrl]) {
      const ok = (await (await post(url, keys[0], toolsCall(1))).json()) as RpcAnswer;
      expect(ok.result?.content[0].text).toBe('pong');
    }
  });

  afterAll(async () => {
    await proxiedEdge?.close();
    await pgProxy?.close();
    await upstream?.close();
    // Back with its data if a test left it down, so the apps' Redis clients can close instead of
    // waiting for it. Not restarted when it is up: a second outage while the apps' clients (BullMQ's
    // blocking ones too) are still settling from the last test's made this hook wait past its bound.
    if (redis && !redis.running()) await redis.restart();
    // Closed once every app is ready again (reconnected): closing mid-reconnect can wait on Redis for good.
    for (const url of [p.edgeUrl, p.adminUrl, p.workerUrl])
      while ((await fetch(`${url}/readyz`)).status !== 200) await new Promise((r) => setTimeout(r, 50));
    await p?.close();
    await redis?.stop();
  });

  it('should answer /readyz with one shape on the edge, the admin API and the worker', async () => {
    for (const url of [p.edgeUrl, p.adminUrl, p.workerUrl]) {
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ok', checks: { db: 'ok', redis: 'ok' } });
    }
  });

  it('should answer 503 with Retry-After when Postgres is down and the key is not cached', async () => {
    await pgProxy.close();
    await expectUnavailable(await post(proxiedEdgeUrl, keys[1], toolsCall(7)), 'database', null);
    // The process is alive and says it is not ready.
    expect((await fetch(`${proxiedEdgeUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${proxiedEdgeUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await ready.json()).toEqual({ status: 'unavailable', checks: { db: 'failed', redis: 'ok' } });
  });

  it('should answer 503 with Retry-After when Redis is down, for calls and new sessions', async () => {
    await redis.kill();
    await expectUnavailable(await post(p.edgeUrl, keys[0], initialize), 'redis', null);
    const inSession = await fetch(`${p.edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${keys[0]}`,
        'Mcp-Session-Id': sessionId,
      },
      body: JSON.stringify(toolsCall(9)),
    });
    await expectUnavailable(inSession, 'redis', null);
    // Refused before it runs: a call that reached the upstream could not be recorded.
    const callsBefore = upstream.calls.length;
    await expectUnavailable(await post(p.edgeUrl, keys[0], toolsCall(8)), 'redis', null);
    expect(upstream.calls.length).toBe(callsBefore);
    expect((await fetch(`${p.edgeUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${p.edgeUrl}/readyz`)).status).toBe(503);

    // Redis back: the edge stops refusing at the gate once its client has reconnected.
    await redis.restart();
    let status = 503;
    while (status === 503) {
      const res = await post(p.edgeUrl, keys[0], { jsonrpc: '2.0', id: 10, method: 'tools/list' });
      status = res.status;
      await res.text();
      // The edge's client reconnects on its own schedule (ioredis backs off up to 2 s): poll for it.
      if (status === 503) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(200);
  });
});
