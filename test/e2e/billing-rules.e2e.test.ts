import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { loadEdgeConfig } from '@tollgate/config';
import { QueueName } from '@tollgate/queue';
import { callMeta, connectAgent, toolError, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { countTokens } from '@tollgate/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FixtureServer,
  FixtureTool,
  STANDARD_FIXTURE_TOOLS,
  startFixtureServer,
} from '../fixtures/http-fixture-server';
import { startSseFixtureServer } from '../fixtures/sse-fixture-server';
import { createEdgeApp } from '../../apps/mcp-edge/src/edge-app';
import { RunningPlatform, startPlatform } from '../support/platform';

const CAP = 600;
const PER_CALL = 1_000;
const PER_TOKEN = 3;

/** Ids of the upstream calls the waiting tools started, and of those whose tool saw its abort signal. */
const startedUpstreamCalls: (string | number)[] = [];
const abortedUpstreamCalls: (string | number)[] = [];

/** Waits up to 20 s, or until the call is cancelled, which it records. */
function waitingTool(name: string): FixtureTool {
  return {
    definition: {
      name,
      description: 'Waits until cancelled (20 s at most).',
      inputSchema: { type: 'object', properties: {} },
    },
    run: (_args, extra) =>
      new Promise((resolve) => {
        if (extra) startedUpstreamCalls.push(extra.requestId);
        const timer = setTimeout(() => resolve({ content: [{ type: 'text', text: 'waited' }] }), 20_000);
        extra?.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          abortedUpstreamCalls.push(extra.requestId);
          resolve({ content: [{ type: 'text', text: 'aborted' }] });
        });
      }),
  };
}

type PageMeta = { handle: string; page: number; pages: number; nextCursor: string | null };

/** Billing rules that match what an agent was delivered, through the real edge and ledger. */
describe('billing rules', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let fixture: FixtureServer;
  let sse: { url: string; close(): Promise<void> };
  let orgId: string;
  let teamId: string;
  let userId: string;
  let upstreamId: string;
  const agents: Client[] = [];

  async function newAgent(name: string): Promise<{ agent: Client; keyId: string }> {
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name });
    const agent = await connectAgent(p.edgeUrl, key.body.secret);
    agents.push(agent);
    return { agent, keyId: key.body.key.id };
  }

  async function ledger(ids: string[]) {
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, ids);
    return db.usageEvent.findMany({ where: { id: { in: ids } } });
  }

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startFixtureServer([...STANDARD_FIXTURE_TOOLS, waitingTool('wait'), waitingTool('wait-free')]);
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Billing', slug: 'billing' })).body.id;
    teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'b@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'fixture',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
        outputTokenCap: CAP,
      })
    ).body.id;
    // The SDK client's path to an upstream (legacy HTTP+SSE; stdio goes the same way).
    sse = await startSseFixtureServer([waitingTool('wait')]);
    const legacyId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, { namespace: 'legacy', transport: 'SSE', url: sse.url })
    ).body.id;
    const syncs = await Promise.all(
      [upstreamId, legacyId].map((id) => p.admin('POST', `/v1/orgs/${orgId}/upstreams/${id}/sync`)),
    );
    await waitForJobs(
      p.env.redisUrl,
      p.env.redisPrefix,
      QueueName.CatalogSync,
      syncs.map((s) => s.body.jobId),
    );
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fixture:*', 'legacy:*'], deny: [] });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId,
      toolPattern: '*',
      perCallMicros: PER_CALL,
      perOutputTokenMicros: PER_TOKEN,
    });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId,
      toolPattern: 'wait',
      perCallMicros: 500,
      chargeFailedCalls: true,
    });
  });

  /** Resolves with the upstream's request id once the upstream has a call of `tool` it had not before. */
  async function upstreamCallOf(tool: string, seen: number): Promise<string | number> {
    await expect
      .poll(() => fixture.calls.filter((c) => c.tool === tool).length, { timeout: 10_000, interval: 10 })
      .toBeGreaterThan(seen);
    return fixture.calls.filter((c) => c.tool === tool)[seen].requestId;
  }

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.close()));
    await db?.$disconnect();
    await fixture?.close();
    await sse?.close();
    await p?.close();
  });

  it('should charge every page delivered, the first with the call and each later one when it is read', async () => {
    const { agent } = await newAgent('pages');
    let current = (await agent.callTool({ name: 'fixture__huge', arguments: { lines: 400 } })) as CallToolResult;
    const ids: string[] = [];
    let deliveredTokens = 0;
    let charged = 0;
    for (;;) {
      const meta = callMeta(current)!;
      const tokens = countTokens((current.content[0] as { text: string }).text);
      const page = current._meta?.['tollgate/page'] as PageMeta;
      // Each answer bills the tokens it delivered: the page, at the call's per-token price.
      expect(meta.outputTokens).toBe(tokens);
      expect(meta.costMicros).toBe((page.page === 1 ? PER_CALL : 0) + PER_TOKEN * tokens);
      ids.push(meta.callId);
      deliveredTokens += tokens;
      charged += meta.costMicros;
      if (!page.nextCursor) break;
      current = (await agent.callTool({
        name: 'tollgate__read_result_page',
        arguments: { handle: page.handle, cursor: page.nextCursor },
      })) as CallToolResult;
      expect(current.isError ?? false).toBe(false);
    }
    expect(ids.length).toBeGreaterThan(2);
    expect(deliveredTokens).toBeGreaterThan(2 * CAP);
    expect(charged).toBe(PER_CALL + PER_TOKEN * deliveredTokens);

    // The ledger: one row per answer, same tool, its own id, summing to what was delivered.
    const rows = await ledger(ids);
    expect(rows).toHaveLength(ids.length);
    expect(new Set(rows.map((r) => `${r.upstreamId}/${r.toolName}/${r.outcome}`))).toEqual(
      new Set([`${upstreamId}/huge/OK`]),
    );
    expect(rows.reduce((sum, r) => sum + r.outputTokens, 0)).toBe(deliveredTokens);
    expect(rows.reduce((sum, r) => sum + r.costMicros, 0n)).toBe(BigInt(charged));
  });

  it('should refuse a page read the budget cannot cover with BUDGET_EXCEEDED, charging nothing for it', async () => {
    const { agent, keyId } = await newAgent('tight');
    // Enough for the call's estimate (1,000 + 3 x 600), not for a second page after the first.
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'KEY',
          scopeId: keyId,
          period: 'MONTH',
          limitMicros: 3_000,
        })
      ).status,
    ).toBe(200);
    const first = (await agent.callTool({ name: 'fixture__huge', arguments: { lines: 400 } })) as CallToolResult;
    expect(first.isError ?? false).toBe(false);
    const page = first._meta?.['tollgate/page'] as PageMeta;
    const refused = (await agent.callTool({
      name: 'tollgate__read_result_page',
      arguments: { handle: page.handle, cursor: page.nextCursor },
    })) as CallToolResult;
    expect(toolError(refused)).toMatchObject({ code: 'BUDGET_EXCEEDED', scope: 'KEY', limitMicros: 3_000 });
    expect(callMeta(refused)).toBeUndefined();
    const rows = await ledger([callMeta(first)!.callId]);
    expect(await db.usageEvent.count({ where: { keyId } })).toBe(1);
    expect(rows[0].costMicros).toBe(BigInt(callMeta(first)!.costMicros));
  });

  it('should cancel the upstream call when the agent cancels, and charge it as the rule says for failed calls', async () => {
    const { agent, keyId } = await newAgent('cancels');
    const cancel = new AbortController();
    const call = agent
      .callTool({ name: 'fixture__wait', arguments: {} }, undefined, { signal: cancel.signal })
      .catch((err: Error) => err);
    const upstreamRequest = await upstreamCallOf('wait', 0);
    cancel.abort('no longer needed'); // the SDK client sends notifications/cancelled
    expect(await call).toBeInstanceOf(Error);
    // The upstream got notifications/cancelled for its request, and its tool saw the abort.
    await expect
      .poll(() => fixture.cancellations.map((c) => c.requestId), { timeout: 10_000 })
      .toContain(upstreamRequest);
    expect(abortedUpstreamCalls).toContain(upstreamRequest);
    // The rule for "wait" charges failed calls: the per-call price, as a failed call.
    await expect
      .poll(() => db.usageEvent.findMany({ where: { keyId, toolName: 'wait' } }), { timeout: 30_000 })
      .toMatchObject([{ outcome: 'UPSTREAM_ERROR', costMicros: 500n, outputTokens: 0 }]);
  });

  it('should cancel a call answered through the SDK path from another request, free when failed calls are', async () => {
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'raw-calls' });
    const post = (body: unknown) =>
      fetch(`${p.edgeUrl}/mcp`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${key.body.secret}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(body),
      });
    // A batch is answered by the SDK, not the lean path.
    const seen = fixture.calls.filter((c) => c.tool === 'wait-free').length;
    const answer = post([
      { jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: { name: 'fixture__wait-free', arguments: {} } },
    ]);
    const upstreamRequest = await upstreamCallOf('wait-free', seen);
    expect(
      (
        await post({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: 'slow-1', reason: 'changed my mind' },
        })
      ).status,
    ).toBe(202);
    // The SDK answers a batch of one with the lone answer.
    const replies = (await (await answer).json()) as { result: CallToolResult } | { result: CallToolResult }[];
    const reply = Array.isArray(replies) ? replies[0] : replies;
    expect(toolError(reply.result)).toMatchObject({ code: 'CANCELLED', charged: false });
    expect(callMeta(reply.result)?.costMicros).toBe(0);
    await expect
      .poll(() => fixture.cancellations.map((c) => c.requestId), { timeout: 10_000 })
      .toContain(upstreamRequest);
    expect(abortedUpstreamCalls).toContain(upstreamRequest);
    const [row] = await ledger([callMeta(reply.result)!.callId]);
    expect(row).toMatchObject({ keyId: key.body.key.id, outcome: 'UPSTREAM_ERROR', costMicros: 0n });
  });

  it('should cancel a call running on another edge than the one the cancellation reaches', async () => {
    const edgeB = await createEdgeApp(loadEdgeConfig(p.env.vars));
    await edgeB.listen(0, '127.0.0.1');
    const edgeBUrl = (await edgeB.getUrl()).replace('[::1]', '127.0.0.1');
    try {
      const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'two-edges' });
      const post = (edgeUrl: string, body: unknown) =>
        fetch(`${edgeUrl}/mcp`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${key.body.secret}`,
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify(body),
        });
      const seen = fixture.calls.filter((c) => c.tool === 'wait-free').length;
      const answer = post(p.edgeUrl, {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'fixture__wait-free', arguments: {} },
      });
      const upstreamRequest = await upstreamCallOf('wait-free', seen);
      expect(
        (await post(edgeBUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } })).status,
      ).toBe(202);
      const reply = (await (await answer).json()) as { result: CallToolResult };
      expect(toolError(reply.result)).toMatchObject({ code: 'CANCELLED', charged: false });
      await expect
        .poll(() => fixture.cancellations.map((c) => c.requestId), { timeout: 10_000 })
        .toContain(upstreamRequest);
    } finally {
      await edgeB.close();
    }
  });

  it('should cancel the call on an upstream the SDK client serves (SSE), which sees its abort', async () => {
    const { agent } = await newAgent('cancels-sse');
    const started = startedUpstreamCalls.length;
    const cancel = new AbortController();
    const call = agent
      .callTool({ name: 'legacy__wait', arguments: {} }, undefined, { signal: cancel.signal })
      .catch((err: Error) => err);
    await expect.poll(() => startedUpstreamCalls.length, { timeout: 10_000, interval: 10 }).toBe(started + 1);
    cancel.abort('no longer needed');
    expect(await call).toBeInstanceOf(Error);
    await expect.poll(() => abortedUpstreamCalls, { timeout: 10_000 }).toContain(startedUpstreamCalls[started]);
  });

  it('should treat OUTPUT_BUDGET_EXCEEDED as a failed call: free, unless the rule charges failed calls', async () => {
    const { agent } = await newAgent('refused-output');
    const free = (await agent.callTool({ name: 'fixture__big-image', arguments: {} })) as CallToolResult;
    expect(toolError(free)).toMatchObject({ code: 'OUTPUT_BUDGET_EXCEEDED', charged: false });
    expect(callMeta(free)?.costMicros).toBe(0);

    await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId,
      toolPattern: 'big-image',
      perCallMicros: 700,
      chargeFailedCalls: true,
    });
    let charged: CallToolResult;
    do charged = (await agent.callTool({ name: 'fixture__big-image', arguments: {} })) as CallToolResult;
    while (callMeta(charged)?.costMicros === 0); // until the edge has the new price
    expect(toolError(charged)).toMatchObject({ code: 'OUTPUT_BUDGET_EXCEEDED', charged: true });
    expect(callMeta(charged)?.costMicros).toBe(700);

    const rows = await ledger([callMeta(free)!.callId, callMeta(charged)!.callId]);
    expect(rows.map((r) => [r.outcome, r.costMicros]).sort()).toEqual([
      ['TOOL_ERROR', 0n],
      ['TOOL_ERROR', 700n],
    ]);
  });
});
