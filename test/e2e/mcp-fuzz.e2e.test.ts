import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { QueueName } from '@tollgate/queue';
import { waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

type Answer = {
  jsonrpc?: string;
  id?: unknown;
  result?: { isError?: boolean; content?: { text: string }[]; _meta?: Record<string, any> };
  error?: { code: number; message: string };
};

/**
 * Bad protocol input at /mcp: every answer is a JSON-RPC error or a tool result, never a 5xx,
 * and the edge keeps serving. Table cases for the known holes, then fast-check for the rest.
 */
describe('/mcp fuzz: bad protocol input never answers 5xx', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let upstream: FixtureServer;
  let orgId: string;
  let keySecret: string;
  const statuses = new Map<number, number>();

  const send = async (body: string | Uint8Array, headers: Record<string, string> = {}) => {
    const res = await fetch(`${p.edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${keySecret}`,
        ...headers,
      },
      body,
    });
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    const text = await res.text();
    return { status: res.status, text, json: () => JSON.parse(text) as Answer | Answer[] };
  };
  const toolsCall = (id: number | string, name: string, args?: unknown) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, ...(args === undefined ? {} : { arguments: args }) },
  });

  beforeAll(async () => {
    // The throttle on refused input would answer most generated bodies 429 unread, leaving the
    // parser unexplored; it has its own test (edge-hostile-input).
    p = await startPlatform({ EDGE_REFUSED_INPUT_ALLOWANCE: '0' });
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    upstream = await startFixtureServer();
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Fuzz', slug: 'fuzz' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'fuzz@acme.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    keySecret = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'agent' })).body.secret;
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
  });

  afterAll(async () => {
    const total = [...statuses.values()].reduce((a, b) => a + b, 0);
    const fiveXx = [...statuses].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0);
    console.log(
      `/mcp fuzz: ${total} requests, 5xx: ${fiveXx}, by status: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
    );
    await upstream?.close();
    await db?.$disconnect();
    await p?.close();
  });

  it('should answer an empty batch as an Invalid Request, not 202', async () => {
    const res = await send('[]');
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request: an empty batch' },
    });
  });

  it('should refuse a batch with one request id twice, running and charging neither', async () => {
    const callsBefore = upstream.calls.length;
    const res = await send(
      JSON.stringify([toolsCall(5, 'fx__ping'), toolsCall(5, 'fx__reported-cost', { costMicros: 10 })]),
    );
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({
      id: null,
      error: { code: -32600, message: 'Invalid Request: the batch uses the request id 5 more than once' },
    });
    expect(upstream.calls.length).toBe(callsBefore);
    // A good call after it reaches the ledger; the refused batch left no row before it.
    const good = (await send(JSON.stringify(toolsCall(6, 'fx__ping')))).json() as Answer;
    const callId = good.result!._meta!['tollgate/call'].callId as string;
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callId]);
    const rows = await db.usageEvent.findMany({ where: { orgId } });
    expect(rows.map((r) => r.id)).toEqual([callId]);
  });

  it('should answer known hostile bodies with JSON-RPC errors or tool errors', async () => {
    const deepArgs = `${'{"a":'.repeat(20_000)}{}${'}'.repeat(20_000)}`;
    const manyKeys = `{${Array.from({ length: 200_000 }, (_, i) => `"k${i}":0`).join(',')}}`;
    const cases: { name: string; body: string | Uint8Array; expectCode?: number; expectToolError?: string }[] = [
      { name: 'a body nested 100,000 deep', body: '['.repeat(100_000) + ']'.repeat(100_000), expectCode: -32600 },
      {
        name: 'params nested 100,000 deep',
        body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
        // Refused on the raw bytes, before parsing (deeper than 68 levels).
        expectCode: -32600,
      },
      {
        name: 'arguments nested 20,000 deep',
        body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx__ping","arguments":${deepArgs}}}`,
        expectCode: -32600,
      },
      {
        name: 'arguments with 200,000 keys',
        body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx__ping","arguments":${manyKeys}}}`,
        expectCode: -32600,
      },
      { name: 'a batch of 200,000 keys', body: `[${manyKeys}]`, expectCode: -32600 },
      {
        name: 'params not an object',
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"fx__ping"}',
        expectCode: -32602,
      },
      {
        name: 'a NUL byte in the tool name',
        body: JSON.stringify(toolsCall(1, 'fx__ping\u0000')),
        expectToolError: 'UNKNOWN_TOOL',
      },
      { name: 'a NUL byte in arguments', body: JSON.stringify(toolsCall(1, 'fx__ping', { q: 'a\u0000b' })) },
      {
        name: 'a lone surrogate in the tool name',
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx__\\ud800"}}',
        expectToolError: 'UNKNOWN_TOOL',
      },
      {
        name: 'a lone surrogate in arguments',
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx__ping","arguments":{"q":"\\udc00"}}}',
      },
      {
        name: 'a lone surrogate as the method',
        body: '{"jsonrpc":"2.0","id":1,"method":"\\ud800"}',
        expectCode: -32601,
      },
      {
        name: 'invalid UTF-8 bytes',
        body: Buffer.from([0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x3a, 0x31, 0x7d]),
        expectCode: -32600,
      },
      { name: 'a NUL byte outside strings', body: '{"jsonrpc":"2.0",\u0000"id":1}', expectCode: -32700 },
      { name: 'truncated JSON', body: '{"jsonrpc":"2.0","id":1,"method":"tools/ca', expectCode: -32700 },
      { name: 'a number as the body', body: '42', expectCode: -32600 },
      { name: 'an object id', body: '{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}', expectCode: -32600 },
    ];
    for (const c of cases) {
      const res = await send(c.body);
      expect(res.status, c.name).toBeLessThan(500);
      const answer = res.text ? res.json() : null;
      const first = Array.isArray(answer) ? answer[0] : answer;
      if (c.expectCode !== undefined)
        expect(first?.error?.code, `${c.name}: ${res.text.slice(0, 200)}`).toBe(c.expectCode);
      if (c.expectToolError !== undefined)
        expect(first?.result?._meta?.['tollgate/error']?.code, `${c.name}: ${res.text.slice(0, 200)}`).toBe(
          c.expectToolError,
        );
    }
    // What they left in the outbox (refused calls and trail steps holding a NUL or a lone
    // surrogate) does not hold back the org's ledger: a good call after them is written.
    const good = (await send(JSON.stringify(toolsCall(7, 'fx__ping')))).json() as Answer;
    const callId = good.result!._meta!['tollgate/call'].callId as string;
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callId]);
  });

  it('should never answer 5xx to generated JSON-RPC messages and batches, and keep serving', async () => {
    const id = fc.oneof(
      { weight: 8, arbitrary: fc.oneof(fc.nat(), fc.string({ maxLength: 8 })) },
      { weight: 1, arbitrary: fc.oneof(fc.constant(null), fc.double(), fc.boolean(), fc.object({ maxDepth: 1 })) },
    );
    const method = fc.oneof(
      fc.constantFrom(
        'tools/call',
        'tools/list',
        'initialize',
        'ping',
        'notifications/initialized',
        'resources/list',
        'logging/setLevel',
        'prompts/get',
      ),
      fc.string({ unit: 'binary', maxLength: 12 }),
    );
    const args = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.constant(undefined), fc.string({ unit: 'binary' }));
    const params = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record(
          {
            name: fc.oneof(
              fc.constantFrom('fx__ping', 'fx__fail', 'tollgate__call_tool', 'fx__nope'),
              fc.string({ unit: 'binary', maxLength: 10 }),
            ),
            arguments: args,
          },
          { requiredKeys: [] },
        ),
      },
      { weight: 1, arbitrary: fc.anything({ maxDepth: 3 }) },
    );
    const jsonrpc = fc.oneof(
      { weight: 9, arbitrary: fc.constant('2.0') },
      { weight: 1, arbitrary: fc.anything({ maxDepth: 0 }) },
    );
    const message = fc.record({ jsonrpc, id, method, params }, { requiredKeys: ['jsonrpc'] });
    const body = fc.oneof(
      { weight: 5, arbitrary: message.map((m) => JSON.stringify(m)) },
      { weight: 2, arbitrary: fc.array(message, { maxLength: 4 }).map((ms) => JSON.stringify(ms)) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 64 }) },
    );
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        const res = await send(text);
        expect(res.status).toBeLessThan(500);
        if (res.text) expect(() => res.json()).not.toThrow();
      }),
      { numRuns: 3_000 },
    );
    const good = (await send(JSON.stringify(toolsCall(99, 'fx__ping')))).json() as Answer;
    expect(good.result?.content?.[0].text).toBe('pong');
    // 3,000 requests: a busy 2-core machine needs more than the default minute (what counts is no 5xx).
  }, 240_000);
});
