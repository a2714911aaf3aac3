import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QueueName } from '@tollgate/queue';
import { callMeta, connectAgent, toolError, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

// The rule and budget: 0.001 per call plus 0.0001 per output token, 0.02 a day (micro-units).
const PER_CALL = 1_000;
const PER_TOKEN = 100;
const DAILY = 20_000;

/**
 * Per-output-token prices with small hard budgets, through the real edge, worker and upstream: a
 * call reserves its likely cost (the tool's observed p99 of output tokens, or what a hard budget
 * has left when that is less), not the worst case of its output cap, and the budget still never
 * ends above its limit.
 */
describe('per-output-token prices with a small budget', () => {
  let p: RunningPlatform;
  let fixture: FixtureServer;
  let orgId: string;
  let teamId: string;
  let userId: string;
  const agents: Client[] = [];

  async function agentWithBudget(name: string, limitMicros: number, outputTokenCap?: number): Promise<Client> {
    const key = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name })).body;
    const budget = await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
      scope: 'KEY',
      scopeId: key.key.id,
      period: 'DAY',
      limitMicros,
    });
    expect(budget.status).toBe(200);
    if (outputTokenCap !== undefined) {
      const policy = await p.admin('PUT', `/v1/orgs/${orgId}/policies/KEY/${key.key.id}`, {
        allow: [],
        deny: [],
        outputTokenCap,
      });
      expect(policy.status).toBe(200);
    }
    const agent = await connectAgent(p.edgeUrl, key.secret);
    agents.push(agent);
    return agent;
  }

  const huge = (agent: Client, lines = 2) =>
    agent.callTool({ name: 'fx__huge', arguments: { lines } }) as Promise<CallToolResult>;

  beforeAll(async () => {
    p = await startPlatform();
    fixture = await startFixtureServer();
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Small', slug: 'small' })).body.id;
    teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 's@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fx:*'], deny: [] });
    const upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'fx',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    const price = await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId,
      toolPattern: '*',
      perCallMicros: PER_CALL,
      perOutputTokenMicros: PER_TOKEN,
    });
    expect(price.status).toBe(201);
  });

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.close()));
    await fixture?.close();
    await p?.close();
  });

  const answeredIds: string[] = [];
  let answerTokens = 0;

  it('should answer calls of a 0.02/day budget at 0.001 per call + 0.0001 per output token, and stop at its limit, never above', async () => {
    const agent = await agentWithBudget('daily', DAILY);
    let charged = 0;
    let refused: CallToolResult | undefined;
    for (let i = 0; i < 40 && !refused; i++) {
      const res = await huge(agent);
      if (res.isError) refused = res;
      else {
        const meta = callMeta(res)!;
        expect(meta.costMicros).toBe(PER_CALL + PER_TOKEN * meta.outputTokens);
        charged += meta.costMicros;
        answeredIds.push(meta.callId);
        answerTokens = Math.max(answerTokens, meta.outputTokens);
      }
    }
    // The worst case of the default 8,000-token cap (0.801) refused the very first call before.
    expect(answeredIds.length).toBeGreaterThanOrEqual(Math.floor(DAILY / (PER_CALL + PER_TOKEN * answerTokens)));
    expect(toolError(refused!)).toMatchObject({ code: 'BUDGET_EXCEEDED', scope: 'KEY', limitMicros: DAILY });
    expect(charged).toBeLessThanOrEqual(DAILY);
    // Refused only once what is left cannot pay the per-call price and one output token.
    expect(DAILY - charged).toBeLessThan(PER_CALL + PER_TOKEN);
    expect(toolError(refused!)!.hint).toMatch(/does not cover the per-call price/);
  });

  it('should answer a key with 0.0096 left whose output cap is lowered to 100 tokens', async () => {
    const agent = await agentWithBudget('capped', 9_600, 100);
    const res = await huge(agent);
    expect(res.isError ?? false).toBe(false);
    const meta = callMeta(res)!;
    expect(meta.costMicros).toBe(PER_CALL + PER_TOKEN * meta.outputTokens);
    expect(meta.costMicros).toBeLessThanOrEqual(9_600);
  });

  it('should deliver only what the budget left pays for, paging the rest, and never end above the limit', async () => {
    // Pays the per-call price and 100 output tokens; the answer has about 500, so it comes paged.
    const limit = PER_CALL + PER_TOKEN * 100;
    const agent = await agentWithBudget('hundred-tokens', limit);
    const res = await huge(agent, 40);
    expect(res.isError ?? false).toBe(false);
    const meta = callMeta(res)!;
    expect(meta.outputTokens).toBeLessThanOrEqual(100);
    expect(meta.outputTokens).toBeGreaterThan(0);
    let charged = meta.costMicros;
    let page = res._meta?.['tollgate/page'] as { handle: string; nextCursor: string | null };
    // Each later page is admitted against the budget like a call, until it cannot pay for one.
    let next: CallToolResult;
    for (;;) {
      expect(page.nextCursor).toBeTruthy();
      next = (await agent.callTool({
        name: 'tollgate__read_result_page',
        arguments: { handle: page.handle, cursor: page.nextCursor },
      })) as CallToolResult;
      if (next.isError) break;
      charged += callMeta(next)!.costMicros;
      page = next._meta?.['tollgate/page'] as typeof page;
    }
    expect(toolError(next)).toMatchObject({ code: 'BUDGET_EXCEEDED', limitMicros: limit });
    expect(charged).toBeLessThanOrEqual(limit);
    expect(charged).toBeGreaterThan(limit / 2);
  });

  it('should reserve the p99 of output tokens the worker measured, not the cap', async () => {
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, answeredIds);
    const scores = await p.admin('POST', `/v1/orgs/${orgId}/tools/tier-scores`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.TierScores, [scores.body.jobId]);
    const tools = (await p.admin('GET', `/v1/orgs/${orgId}/tools`)).body as {
      name: string;
      outputTokensP99: number | null;
    }[];
    const p99 = tools.find((t) => t.name === 'huge')!.outputTokensP99;
    expect(p99).toBe(answerTokens);
    expect(tools.find((t) => t.name === 'slow')!.outputTokensP99).toBeNull();

    // Too little for the per-call price: the refusal names what the call reserved for, now the p99.
    const agent = await agentWithBudget('broke', PER_CALL);
    await expect
      .poll(async () => toolError(await huge(agent)))
      .toMatchObject({
        code: 'BUDGET_EXCEEDED',
        reservedOutputTokens: p99,
        outputTokenCap: 8_000,
        requestedMicros: PER_CALL + PER_TOKEN * p99!,
      });
  });
});
