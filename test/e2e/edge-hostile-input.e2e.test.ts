import type { INestApplication } from '@nestjs/common';
import { loadEdgeConfig } from '@tollgate/config';
import { QueueName } from '@tollgate/queue';
import { TestClock, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEdgeApp } from '../../apps/mcp-edge/src/edge-app';
import { REFUSED_INPUT_WINDOW_MS } from '../../apps/mcp-edge/src/endpoint/hostile-input-allowance.service';
import {
  FixtureServer,
  PROTOCOL_FIXTURE_TOOLS,
  STANDARD_FIXTURE_TOOLS,
  startFixtureServer,
} from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

type Answer = {
  id?: unknown;
  result?: { isError?: boolean; content: { text: string }[]; _meta?: Record<string, any> };
  error?: { code: number; message: string; data?: Record<string, any> };
};

/** JSON text nested `depth` levels deep (JSON.stringify itself overflows the stack on such a value). */
class DeepJson {
  constructor(readonly depth: number) {}
  toText(): string {
    return `${'{"a":'.repeat(this.depth - 1)}{}${'}'.repeat(this.depth - 1)}`;
  }
}

/** JSON.stringify, but a DeepJson anywhere in `value` is written as its text. */
function toJson(value: unknown): string {
  const holes: string[] = [];
  const text = JSON.stringify(value, (_k, v: unknown) =>
    v instanceof DeepJson ? `\u0000deep${holes.push(v.toText()) - 1}` : v,
  );
  return text.replace(/"\\u0000deep(\d+)"/g, (_m, i: string) => holes[Number(i)]);
}

const nested = (depth: number) => new DeepJson(depth);

/**
 * One key must not take an upstream away from everyone: a hostile key's arguments over the limits
 * are refused before any work, and nothing it sends (nor its hang-ups) opens the upstream's
 * circuit breaker, which every key of the organisation shares.
 */
describe('edge: a hostile key and the shared upstream', () => {
  // The first edge's time: a throttle window passes when the test moves it.
  const clock = new TestClock();
  let p: RunningPlatform;
  let upstream: FixtureServer;
  let hostileKey: string;
  let honestKey: string;
  let refusedKey: string;
  let breakerKeys: string[];
  let floodKey: string;
  let spreadKey: string;
  let secondEdge: INestApplication;
  let secondEdgeUrl: string;

  const post = (key: string, body: unknown, signal?: AbortSignal) =>
    fetch(`${p.edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${key}`,
      },
      body: toJson(body),
      signal,
    });
  const postText = (key: string, body: string, edgeUrl = p.edgeUrl) =>
    fetch(`${edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${key}`,
      },
      body,
    });
  const toolsCall = (id: number, name: string, args?: unknown) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, ...(args === undefined ? {} : { arguments: args }) },
  });
  const call = async (key: string, name: string, args?: unknown): Promise<Answer> =>
    (await (await post(key, toolsCall(1, name, args))).json()) as Answer;
  const errorOf = (a: Answer) =>
    (a.result?._meta?.['tollgate/error'] ?? a.error?.data) as
      { code: string; limit?: string; allowed?: number; measured?: number; message: string; hint: string } | undefined;

  beforeAll(async () => {
    p = await startPlatform({}, { clock });
    upstream = await startFixtureServer([...STANDARD_FIXTURE_TOOLS, ...PROTOCOL_FIXTURE_TOOLS]);
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Shared', slug: 'shared' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const keyFor = async (email: string) => {
      const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email })).body.id;
      await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
      return (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: email })).body.secret as string;
    };
    hostileKey = await keyFor('mallory@shared.test');
    honestKey = await keyFor('alice@shared.test');
    // Each test that sends many refused requests has its own key: each key has its own allowance.
    refusedKey = await keyFor('rex@shared.test');
    breakerKeys = [await keyFor('bob@shared.test'), await keyFor('bo@shared.test'), await keyFor('b@shared.test')];
    floodKey = await keyFor('fred@shared.test');
    spreadKey = await keyFor('sam@shared.test');
    // A second edge replica on the same database and Redis.
    secondEdge = await createEdgeApp(loadEdgeConfig(p.env.vars));
    await secondEdge.listen(0, '127.0.0.1');
    secondEdgeUrl = (await secondEdge.getUrl()).replace('[::1]', '127.0.0.1');
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
    await secondEdge?.close();
    await upstream?.close();
    await p?.close();
  });

  it('should refuse arguments nested past 64 with INVALID_ARGUMENTS before the upstream on every path', async () => {
    const deep = nested(65);
    const callsBefore = upstream.calls.length;
    const lean = await call(hostileKey, 'fx__ping', deep);
    // A batch goes the SDK's way (a batch of one is answered as one message).
    const batched = (await (await post(hostileKey, [toolsCall(2, 'fx__ping', deep)])).json()) as Answer | Answer[];
    const viaBatch = Array.isArray(batched) ? batched[0] : batched;
    const viaMetaTool = await call(hostileKey, 'tollgate__call_tool', { name: 'fx__ping', arguments: deep });
    for (const answer of [lean, viaBatch, viaMetaTool]) {
      expect(answer.result?.isError).toBe(true);
      expect(errorOf(answer)).toMatchObject({
        code: 'INVALID_ARGUMENTS',
        limit: 'maxDepth',
        allowed: 64,
        measured: 65,
        charged: false,
      });
      // Refused before admission: no call id, no cost.
      expect(answer.result?._meta?.['tollgate/call']).toBeUndefined();
    }
    expect(upstream.calls.length).toBe(callsBefore);
  });

  it('should refuse a body nested 20,000 deep or with millions of values before parsing it, on every path', async () => {
    const callsBefore = upstream.calls.length;
    const wideArray = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx__ping","arguments":{"a":[${'0,'.repeat(150_000)}0]}}}`;
    for (const [body, limit] of [
      [toJson(toolsCall(1, 'fx__ping', nested(20_000))), /nested deeper than 68 levels/],
      [toJson([toolsCall(2, 'fx__ping', nested(20_000))]), /nested deeper than 68 levels/],
      [toJson(toolsCall(3, 'tollgate__call_tool', { name: 'fx__ping', arguments: nested(20_000) })), /nested deeper/],
      [wideArray, /more than 100000 keys and array items/],
    ] as const) {
      const res = await postText(refusedKey, body);
      expect(res.status).toBe(400);
      const answer = (await res.json()) as Answer;
      expect(answer.error).toMatchObject({ code: -32600, message: expect.stringMatching(limit) });
    }
    expect(upstream.calls.length).toBe(callsBefore);
  });

  it('should refuse arguments over 1 MiB and objects with too many keys, naming the limit and the measured value', async () => {
    const big = await call(hostileKey, 'fx__ping', { blob: 'x'.repeat(1_100_000) });
    expect(errorOf(big)).toMatchObject({
      code: 'INVALID_ARGUMENTS',
      limit: 'maxBytes',
      allowed: 1_048_576,
      measured: 1_100_011,
    });
    const wide = await call(
      hostileKey,
      'fx__ping',
      Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i])),
    );
    expect(errorOf(wide)).toMatchObject({
      code: 'INVALID_ARGUMENTS',
      limit: 'maxKeysPerObject',
      allowed: 1_000,
      measured: 5_000,
    });
    expect(errorOf(wide)!.hint).toMatch(/64 levels deep/);
  });

  it("should keep another key's calls to the same upstream succeeding while a hostile key sends bad calls and hangs up", async () => {
    const deep = nested(65);
    const honestAnswers: Answer[] = [];
    const hostileCodes = new Set<string | undefined>();
    // The breaker opens after 5 failures in a row: each burst is more than that, with no good call between.
    for (const hostile of breakerKeys) {
      // A JSON-RPC error the upstream answers to what it was sent: the upstream is up.
      for (let i = 0; i < 6; i++) hostileCodes.add(errorOf(await call(hostile, 'fx__protocol-error', {}))?.code);
      // A call the caller abandons mid-way says nothing about the upstream either.
      for (let i = 0; i < 6; i++) {
        const hangUp = new AbortController();
        const slowSeen = upstream.calls.filter((c) => c.tool === 'slow').length;
        let answered: Answer | null = null;
        const slow = post(hostile, toolsCall(3, 'fx__slow', { ms: 2_000 }), hangUp.signal)
          .then(async (res) => (answered = (await res.json()) as Answer))
          .catch(() => null);
        // Hang up once the upstream has the call (an open breaker would answer at once instead).
        await waitUntil(() => answered !== null || upstream.calls.filter((c) => c.tool === 'slow').length > slowSeen);
        hangUp.abort();
        await slow;
        if (answered) hostileCodes.add(errorOf(answered)?.code);
      }
      // Deep and oversized arguments, on the lean path and through the meta-tool: refused, then
      // (past the key's allowance of refused input, 10) answered 429 unread, after a second's hold.
      const refusedInput = [
        () => call(hostile, 'fx__ping', deep),
        () => call(hostile, 'tollgate__call_tool', { name: 'fx__ping', arguments: deep }),
        () => call(hostile, 'fx__ping', { blob: 'y'.repeat(1_060_000) }),
      ];
      let code: string | undefined;
      for (let i = 0; code !== 'HOSTILE_INPUT_THROTTLED' && i < 12; i++) {
        code = errorOf(await refusedInput[i % refusedInput.length]())?.code;
        hostileCodes.add(code);
      }
      for (let i = 0; i < 3; i++) honestAnswers.push(await call(honestKey, 'fx__ping'));
    }
    expect([...hostileCodes].sort()).toEqual(['HOSTILE_INPUT_THROTTLED', 'INVALID_ARGUMENTS', 'UPSTREAM_ERROR']);
    // The breaker never opened: the other key's calls all went through.
    for (const answer of honestAnswers) {
      expect(errorOf(answer)?.code).toBeUndefined();
      expect(answer.result?.content[0].text).toBe('pong');
    }
  });

  it('should answer a key 429 before reading its body once it has sent 10 refused requests, and nobody else', async () => {
    const deepBody = toJson(toolsCall(1, 'fx__ping', nested(20_000)));
    for (let i = 0; i < 10; i++) expect((await postText(floodKey, deepBody)).status).toBe(400);
    const callsBefore = upstream.calls.length;
    // Even a well-formed call: the key's requests are refused unread until the window ends.
    const throttled = await postText(floodKey, toJson(toolsCall(2, 'fx__ping', {})));
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await throttled.json()) as Answer).error?.data).toMatchObject({ code: 'HOSTILE_INPUT_THROTTLED' });
    const big = await postText(floodKey, `{"a":"${'z'.repeat(900_000)}"}`);
    expect(big.status).toBe(429);
    expect(upstream.calls.length).toBe(callsBefore);
    // Another key of the same organisation is not held back.
    expect((await call(honestKey, 'fx__ping')).result?.content[0].text).toBe('pong');
    // Once the window has passed (on the edge's clock, moved rather than waited for), the key is served again.
    clock.advance(REFUSED_INPUT_WINDOW_MS);
    expect((await postText(floodKey, toJson(toolsCall(3, 'fx__ping', {})))).status).toBe(200);
  });

  it("should count a key's refused requests on all edges together: 5 on each of two edges use up its allowance of 10 on both", async () => {
    const deepBody = toJson(toolsCall(1, 'fx__ping', nested(20_000)));
    const goodCall = toJson(toolsCall(2, 'fx__ping', {}));
    for (let i = 0; i < 5; i++) expect((await postText(spreadKey, deepBody)).status).toBe(400);
    // Within the allowance so far: the key's good calls are served, on either edge.
    expect((await postText(spreadKey, goodCall, secondEdgeUrl)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await postText(spreadKey, deepBody, secondEdgeUrl)).status).toBe(400);
    expect((await postText(spreadKey, goodCall)).status).toBe(200);
    // The tenth refusal, on the second edge: both edges now answer the key 429 (the first once the
    // second's pub/sub message has reached it), though neither saw 10 refusals itself.
    expect((await postText(spreadKey, deepBody, secondEdgeUrl)).status).toBe(400);
    expect((await postText(spreadKey, goodCall, secondEdgeUrl)).status).toBe(429);
    await vi.waitFor(async () => expect((await postText(spreadKey, goodCall)).status).toBe(429), {
      timeout: 5_000,
      interval: 20,
    });
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 5));
}
