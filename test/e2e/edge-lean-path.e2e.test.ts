import { QueueName } from '@tollgate/queue';
import { waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

/**
 * A plain `tools/call` is answered on the edge's lean path (no per-request SDK Server); anything
 * else goes through the SDK. These tests hold the two paths to the same answers and keep the
 * SDK's protocol rules for requests the lean path declines.
 */
describe('edge: lean tools/call path', () => {
  let p: RunningPlatform;
  let upstream: FixtureServer;
  let orgId: string;
  let keySecret: string;

  const headers = () => ({
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    Authorization: `Bearer ${keySecret}`,
  });
  const post = (body: unknown, extra: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${p.edgeUrl}/mcp`, {
      method: 'POST',
      headers: { ...headers(), ...extra },
      body: JSON.stringify(body),
      signal,
    });
  const toolsCall = (id: number | string, name: string, args?: unknown) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, ...(args === undefined ? {} : { arguments: args }) },
  });

  beforeAll(async () => {
    p = await startPlatform();
    upstream = await startFixtureServer();
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Lean', slug: 'lean' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'lean@acme.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'agent' });
    keySecret = key.body.secret;
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
    // One call at a time for this key: a slot that is not given back blocks the next call.
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/rate-limits`, {
          scope: 'KEY',
          scopeId: key.body.key.id,
          toolPattern: '*',
          maxConcurrent: 1,
          callsPerWindow: 1000,
          windowSeconds: 60,
        })
      ).status,
    ).toBe(201);
  });

  afterAll(async () => {
    await upstream?.close();
    await p?.close();
  });

  it('should answer a plain tools/call as the SDK path answers the same call in a batch', async () => {
    const lean = await post(toolsCall('a-1', 'fx__reported-cost', { costMicros: 0 }));
    expect(lean.status).toBe(200);
    expect(lean.headers.get('content-type')).toMatch(/^application\/json/);
    const leanBody = (await lean.json()) as {
      jsonrpc: string;
      id: string;
      result: { content: unknown; _meta: Record<string, any> };
    };

    // A batch is not the lean path's: the SDK answers it.
    const viaSdk = await post([toolsCall(7, 'fx__reported-cost', { costMicros: 0 })]);
    expect(viaSdk.status).toBe(200);
    const answered = (await viaSdk.json()) as typeof leanBody | [typeof leanBody];
    const sdkBody = Array.isArray(answered) ? answered[0] : answered;

    expect(leanBody.jsonrpc).toBe('2.0');
    expect(leanBody.id).toBe('a-1');
    expect(sdkBody.id).toBe(7);
    expect(leanBody.result.content).toEqual(sdkBody.result.content);
    const strip = (meta: Record<string, any>) => ({
      ...meta,
      'tollgate/call': { ...meta['tollgate/call'], callId: 'x', latencyMs: 0 },
      'tollgate/budget': undefined,
    });
    expect(strip(leanBody.result._meta)).toEqual(strip(sdkBody.result._meta));
    expect(leanBody.result._meta['tollgate/call'].costMicros).toBe(1_000);
  });

  it('should answer a refusal as a tool result on the lean path', async () => {
    const res = await post(toolsCall(2, 'fx__no-such-tool'));
    const body = (await res.json()) as { result: { isError: boolean; _meta: Record<string, { code: string }> } };
    expect(body.result.isError).toBe(true);
    expect(body.result._meta['tollgate/error'].code).toBe('UNKNOWN_TOOL');
  });

  it('should answer malformed tools/call params with a JSON-RPC error naming the field', async () => {
    const res = await post({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'fx__ping', arguments: ['not', 'an', 'object'] },
    });
    const body = (await res.json()) as { id: number; error: { code: number; message: string }; result?: unknown };
    expect(body.id).toBe(3);
    expect(body.result).toBeUndefined();
    expect(body.error.message).toMatch(/arguments/);
  });

  it('should keep the protocol rules for clients that do not accept both answer kinds or send an unknown protocol version', async () => {
    const noSse = await post(toolsCall(4, 'fx__ping'), { Accept: 'application/json' });
    expect(noSse.status).toBe(406);
    const oldVersion = await post(toolsCall(5, 'fx__ping'), { 'MCP-Protocol-Version': '1999-01-01' });
    expect(oldVersion.status).toBe(400);
    expect(((await oldVersion.json()) as { error: { message: string } }).error.message).toMatch(
      /Unsupported protocol version/,
    );
  });

  it('should refuse a body over the size limit (1 MiB + 64 KiB) with a JSON-RPC error and keep serving the key', async () => {
    const huge = toolsCall(9, 'fx__ping', { padding: 'x'.repeat(5 * 1024 * 1024) });
    const res = await post(huge);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: number; message: string } }).error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/larger than/),
    });
    const next = (await (await post(toolsCall(10, 'fx__ping'))).json()) as { result: { isError?: boolean } };
    expect(next.result.isError).toBeUndefined();
  });

  it('should give back the concurrency slot when the agent hangs up during a slow call', async () => {
    const hangUp = new AbortController();
    const slow = post(toolsCall(6, 'fx__slow', { ms: 3_000 }), {}, hangUp.signal).catch((err: Error) => err);
    // Wait until the upstream has the call, then hang up.
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (upstream.calls.some((c) => c.tool === 'slow')) {
          clearInterval(poll);
          resolve();
        }
      }, 10);
    });
    hangUp.abort();
    expect(await slow).toBeInstanceOf(Error);

    // The slot came back: the next call is admitted (maxConcurrent is 1), long before the slow one would end.
    const started = Date.now();
    let next: { result: { isError?: boolean; _meta: Record<string, { code?: string }> } } | undefined;
    for (let attempt = 0; attempt < 50; attempt++) {
      next = (await (await post(toolsCall(8, 'fx__ping'))).json()) as typeof next;
      if (!next!.result.isError) break;
      expect(next!.result._meta['tollgate/error'].code).toBe('RATE_LIMITED');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(next!.result.isError).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2_500);
  });
});
