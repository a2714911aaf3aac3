import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { loadEdgeConfig, RedisConfig } from '@tollgate/config';
import { QueueName } from '@tollgate/queue';
import { createRedisClient } from '@tollgate/redis';
import { callMeta, connectAgent, toolError, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { Redis } from 'ioredis';
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEdgeApp } from '../../apps/mcp-edge/src/edge-app';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';
import { startTlsRedis, TlsRedis } from '../support/tls-redis';

const PRICE = 1_000;

/**
 * The platform on a Redis shaped like a managed service (ElastiCache, Memorystore, Azure): TLS only
 * (no plaintext port) with a certificate from a CA of the deployment's own (REDIS_TLS_CA_FILE), an
 * ACL user with a password (REDIS_USERNAME, REDIS_PASSWORD) and the default user off. Every
 * process's connections (the edge's admission and completion, the worker's outbox reader and
 * BullMQ, the admin API) go through it; a wrong CA or password is refused, and never echoed.
 */
describe('the money path on a Redis that takes only TLS and an ACL user', () => {
  let redis: TlsRedis;
  let p: RunningPlatform;
  let upstream: FixtureServer;
  let db: PrismaClient;
  let orgId: string;
  let teamId: string;
  let userId: string;

  /** The Redis settings a process reads from these variables (what the test itself connects with). */
  const settings = (vars: Record<string, string> = {}): RedisConfig => loadEdgeConfig({ ...p.env.vars, ...vars }).redis;

  beforeAll(async () => {
    redis = await startTlsRedis();
    p = await startPlatform({
      REDIS_URL: redis.url,
      REDIS_USERNAME: redis.username,
      REDIS_PASSWORD: redis.password,
      REDIS_TLS_CA_FILE: redis.caFile,
    });
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    upstream = await startFixtureServer();
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Managed', slug: 'managed' })).body.id;
    teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'm@managed.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const up = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'fx',
      transport: 'STREAMABLE_HTTP',
      url: upstream.url,
      callTimeoutMs: 10_000,
    });
    // The catalog sync is a BullMQ job: queued by the admin API, run by the worker, both over TLS.
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${up.body.id}/sync`);
    await waitForJobs(p.env.redis, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fx:*'], deny: [] });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId: up.body.id,
      toolPattern: '*',
      perCallMicros: PRICE,
    });
  }, 120_000);

  afterAll(async () => {
    await upstream?.close();
    await db?.$disconnect();
    await p?.close();
    await redis?.stop();
  });

  it('should admit, answer, charge and meter calls exactly to a hard budget, every connection TLS as the ACL user', async () => {
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'managed' });
    await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
      scope: 'KEY',
      scopeId: key.body.key.id,
      period: 'MONTH',
      limitMicros: 3 * PRICE,
      mode: 'HARD',
    });
    const agent = await connectAgent(p.edgeUrl, key.body.secret);
    try {
      const results: CallToolResult[] = [];
      for (let i = 0; i < 5; i++) results.push((await agent.callTool({ name: 'fx__ping', arguments: {} })) as never);
      const answered = results.filter((r) => !r.isError);
      expect(answered).toHaveLength(3);
      expect(results.slice(3).map((r) => toolError(r as never)?.code)).toEqual(['BUDGET_EXCEEDED', 'BUDGET_EXCEEDED']);
      const callIds = answered.map((r) => callMeta(r as never)!.callId);
      // Completion (settlement and usage event) went through Redis over TLS; the worker drained it.
      await waitForUsageEvents(p.env.redis, p.env.redisPrefix, callIds);
      const rows = await db.usageEvent.findMany({ where: { keyId: key.body.key.id } });
      expect(rows.map((r) => r.id).sort()).toEqual([...callIds].sort());
      expect(rows.every((r) => r.costMicros === BigInt(PRICE))).toBe(true);
    } finally {
      await agent.close();
    }
    // The edge's and the worker's readiness run the money path's no-op admission and epoch checks there.
    expect((await fetch(`${p.edgeUrl}/readyz`)).status).toBe(200);
    expect((await fetch(`${p.workerUrl}/readyz`)).status).toBe(200);
    // The server has no plaintext port and no default user: every client of the three processes is the ACL user.
    const admin = createRedisClient(settings());
    try {
      const clients = String(await admin.call('CLIENT', 'LIST'))
        .trim()
        .split('\n');
      expect(clients.length).toBeGreaterThan(5);
      expect(clients.filter((c) => !/ user=tollgate /.test(c))).toEqual([]);
    } finally {
      admin.disconnect();
    }
  });

  it('should refuse a server its CA does not vouch for, a wrong password and a plaintext connection, naming no password', async () => {
    const attempt = async (config: RedisConfig): Promise<string> => {
      const client = createRedisClient(config, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      // A TLS failure comes as the client's error event; the command only learns the connection closed.
      const seen: string[] = [];
      client.on('error', (err: Error) => seen.push(err.message));
      try {
        await client.connect();
        await client.ping();
        return 'connected';
      } catch (err) {
        return [...seen, (err as Error).message].join('; ');
      } finally {
        client.disconnect();
      }
    };
    const untrusted = await attempt(settings({ REDIS_TLS_CA_FILE: redis.otherCaFile }));
    expect(untrusted).toMatch(/certificate/i);
    const wrong = await attempt(settings({ REDIS_PASSWORD: 'not-the-password' }));
    expect(wrong).toMatch(/WRONGPASS/);
    const anonymous = await attempt({ ...settings(), username: undefined, password: undefined });
    expect(anonymous).toMatch(/NOAUTH/);
    const plain = `redis://127.0.0.1:${redis.port}`;
    const plaintext = await attempt({
      ...settings(),
      tls: undefined,
      url: plain,
      topology: { kind: 'standalone', url: plain },
    });
    expect(plaintext).not.toBe('connected');
    for (const message of [untrusted, wrong, anonymous, plaintext]) expect(message).not.toContain(redis.password);
    // An edge given the wrong password does not start, saying why; nothing it prints carries the
    // password: Redis' refusal of AUTH carries the command, with the credentials, which BullMQ
    // printed whole for a queue with no error listener.
    const printed: string[] = [];
    const spies = (['error', 'warn', 'log'] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        printed.push(args.map((a) => inspect(a)).join(' '));
      }),
    );
    // The apps' own logger writes to the streams, not through console: read those too.
    const written: string[] = [];
    const streamSpies: { mockRestore(): void }[] = [];
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
      streamSpies.push(
        vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
          written.push(String(chunk));
          return write(chunk, ...rest);
        }) as never),
      );
    }
    try {
      const edge = await createEdgeApp(loadEdgeConfig({ ...p.env.vars, REDIS_PASSWORD: 'not-the-password' }));
      const started = await edge.listen(0, '127.0.0.1').then(
        () => 'listening',
        (err: Error) => err.message,
      );
      await edge.close().catch(() => undefined);
      expect(started).toMatch(/^WRONGPASS/);
      expect(started).not.toContain('not-the-password');
      // Its queues' reconnection attempts may still answer for a moment.
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      for (const spy of [...spies, ...streamSpies]) spy.mockRestore();
    }
    expect(printed.filter((line) => /WRONGPASS|not-the-password/.test(line))).toEqual([]);
    expect(written.filter((line) => line.includes('not-the-password'))).toEqual([]);
    // A direct client with the right settings works (the refusals above are the settings, not the server).
    const ok = new Redis(redis.url, {
      username: redis.username,
      password: redis.password,
      tls: { ca: readFileSync(redis.caFile, 'utf8') },
    });
    try {
      expect(await ok.call('ACL', 'WHOAMI')).toBe('tollgate');
    } finally {
      ok.disconnect();
    }
  });
});
