import { QueueName } from '@tollgate/queue';
import { waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  error?: { code: number; message: string };
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
  let p: RunningPlatform;
  let upstream: FixtureServer;
  let hostileKey: string;
  let honestKey: string;

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
  const toolsCall = (id: number, name: string, args?: unknown) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, ...(args === undefined ? {} : { arguments: args }) },
  });
  const call = async (key: string, name: string, args?: unknown): Promise<Answer> =>
    (await (await post(key, toolsCall(1, name, args))).json()) as Answer;
  const errorOf = (a: Answer) =>
    a.result?._meta?.['tollgate/error'] as
      { code: string; limit?: string; allowed?: number; measured?: number; message: string; hint: string } | undefined;

  beforeAll(async () => {
    p = await startPlatform();
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
    await upstream?.close();
    await p?.close();
  });

  it('should refuse arguments nested 20,000 deep with INVALID_ARGUMENTS before the upstream on every path', async () => {
    const deep = nested(20_000);
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
        charged: false,
      });
      expect(errorOf(answer)!.measured).toBeGreaterThanOrEqual(20_000);
      // Refused before admission: no call id, no cost.
      expect(answer.result?._meta?.['tollgate/call']).toBeUndefined();
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
    const deep = nested(20_000);
    const honestAnswers: Answer[] = [];
    const hostileCodes = new Set<string | undefined>();
    // The breaker opens after 5 failures in a row: each burst is more than that, with no good call between.
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 6; i++) {
        // Deep and oversized arguments, on the lean path and through the meta-tool.
        hostileCodes.add(errorOf(await call(hostileKey, 'fx__ping', deep))?.code);
        hostileCodes.add(
          errorOf(await call(hostileKey, 'tollgate__call_tool', { name: 'fx__ping', arguments: deep }))?.code,
        );
        hostileCodes.add(errorOf(await call(hostileKey, 'fx__ping', { blob: 'y'.repeat(2_000_000) }))?.code);
      }
      // A JSON-RPC error the upstream answers to what it was sent: the upstream is up.
      for (let i = 0; i < 6; i++) hostileCodes.add(errorOf(await call(hostileKey, 'fx__protocol-error', {}))?.code);
      // A call the caller abandons mid-way says nothing about the upstream either.
      for (let i = 0; i < 6; i++) {
        const hangUp = new AbortController();
        const slowSeen = upstream.calls.filter((c) => c.tool === 'slow').length;
        let answered: Answer | null = null;
        const slow = post(hostileKey, toolsCall(3, 'fx__slow', { ms: 2_000 }), hangUp.signal)
          .then(async (res) => (answered = (await res.json()) as Answer))
          .catch(() => null);
        // Hang up once the upstream has the call (an open breaker would answer at once instead).
        await waitUntil(() => answered !== null || upstream.calls.filter((c) => c.tool === 'slow').length > slowSeen);
        hangUp.abort();
        await slow;
        if (answered) hostileCodes.add(errorOf(answered)?.code);
      }
      for (let i = 0; i < 3; i++) honestAnswers.push(await call(honestKey, 'fx__ping'));
    }
    expect([...hostileCodes].sort()).toEqual(['INVALID_ARGUMENTS', 'UPSTREAM_ERROR']);
    for (const answer of honestAnswers) {
      expect(errorOf(answer)?.code).toBeUndefined();
      expect(answer.result?.content[0].text).toBe('pong');
    }
    // The breaker never opened, for the hostile key either.
    expect(errorOf(await call(hostileKey, 'fx__ping'))).toBeUndefined();
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 5));
}
