import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { QueueName } from '@tollgate/queue';
import {
  RefusalWatch,
  SERVER_EVERYTHING,
  callMeta,
  connectAgent,
  waitForJobs,
  waitForUsageEvents,
  watchRefusedCalls,
} from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';

const ECHO_PRICE = 250_000;

function errorCode(res: { isError?: unknown; _meta?: unknown }): string | null {
  if (!res.isError) return null;
  return ((res._meta as Record<string, { code: string }>)['tollgate/error'] ?? { code: '?' }).code;
}

/**
 * Refused governed calls end to end: real agents refused by policy, budget, rate limit and an
 * unknown tool; the edge records each refusal through the usage outbox, the worker writes them,
 * and the admin API counts them per key and code, lists them in the per-call log beside the
 * ledger's calls (filters, keyset pages, role scope) and names the budget blocking calls now.
 */
describe('refused calls, recorded and reported', () => {
  let p: RunningPlatform;
  let orgId: string;
  let watch: RefusalWatch;
  const ids = { data: '', web: '', ada: '', bob: '', keyAda: '', keyBob: '', budget: '' };
  const agents: Client[] = [];
  const okCalls: string[] = [];
  let memberToken = '';
  const range = `from=${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}&to=${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}`;

  beforeAll(async () => {
    p = await startPlatform();
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Refusals', slug: 'refusals' })).body.id;
    ids.data = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'data' })).body.id;
    ids.web = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'web' })).body.id;
    const secrets: string[] = [];
    for (const [name, team] of [
      ['ada', ids.data],
      ['bob', ids.web],
    ] as const) {
      const user = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: `${name}@refusals.test` })).body.id;
      ids[name] = user;
      expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${team}/members`, { userId: user })).status).toBe(201);
      const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId: team, userId: user, name: `${name}-key` });
      expect(key.status, JSON.stringify(key.body)).toBe(201);
      ids[name === 'ada' ? 'keyAda' : 'keyBob'] = key.body.key.id;
      secrets.push(key.body.secret);
    }
    const everything = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'everything',
      transport: 'STDIO',
      ...SERVER_EVERYTHING,
    });
    expect(everything.status).toBe(201);
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${everything.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    const policy = await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
      allow: ['everything:*'],
      deny: ['everything:get-tiny-image'],
    });
    expect(policy.status).toBe(200);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: everything.body.id,
          toolPattern: 'echo',
          perCallMicros: ECHO_PRICE,
        })
      ).status,
    ).toBe(201);
    // Ada's key pays for one echo a month; Bob's key may sum twice a minute.
    const budget = await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
      scope: 'KEY',
      scopeId: ids.keyAda,
      period: 'MONTH',
      limitMicros: ECHO_PRICE + 100_000,
      mode: 'HARD',
    });
    expect(budget.status, JSON.stringify(budget.body)).toBe(200);
    ids.budget = budget.body.id;
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/rate-limits`, {
          scope: 'KEY',
          scopeId: ids.keyBob,
          toolPattern: 'everything:get-sum',
          callsPerWindow: 2,
          windowSeconds: 60,
        })
      ).status,
    ).toBe(201);
    const member = await p.admin('POST', '/v1/admin-tokens', { orgId, role: 'MEMBER', userId: ids.bob, name: 'bob' });
    expect(member.status).toBe(201);
    memberToken = member.body.secret;
    for (const secret of secrets) agents.push(await connectAgent(p.edgeUrl, secret));
    watch = await watchRefusedCalls(p.env.redisUrl, p.env.redisPrefix);
  });

  afterAll(async () => {
    await watch?.close();
    await Promise.all(agents.map((a) => a.close()));
    await p?.close();
  });

  it('should count every refusal per key and code, list it in the per-call log beside the ledger calls, and name the blocking budget', async () => {
    const [ada, bob] = agents;
    const call = async (agent: Client, name: string, args: Record<string, unknown>) => {
      const res = await agent.callTool({ name, arguments: args });
      if (!res.isError) okCalls.push(callMeta(res as never)!.callId);
      return errorCode(res as never);
    };
    // Ada: one paid echo, then her budget refuses twice; a denied tool twice; an unknown tool once.
    expect(await call(ada, 'everything__echo', { message: 'paid' })).toBeNull();
    expect(await call(ada, 'everything__echo', { message: 'over' })).toBe('BUDGET_EXCEEDED');
    expect(await call(ada, 'everything__echo', { message: 'over again' })).toBe('BUDGET_EXCEEDED');
    expect(await call(ada, 'everything__get-tiny-image', {})).toBe('TOOL_NOT_ALLOWED');
    expect(await call(ada, 'everything__get-tiny-image', {})).toBe('TOOL_NOT_ALLOWED');
    expect(await call(ada, 'everything__no-such-tool', {})).toBe('UNKNOWN_TOOL');
    // Bob: two sums pass, the third and fourth are rate limited.
    for (let i = 0; i < 4; i++)
      expect(await call(bob, 'everything__get-sum', { a: i, b: 1 })).toBe(i < 2 ? null : 'RATE_LIMITED');

    await watch.written(7);
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, okCalls);

    // Counts per key and code, exact.
    const report = await p.admin('GET', `/v1/orgs/${orgId}/reports/refusals?${range}&groupBy=key,code`);
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    expect(report.body.totalRefusedCalls).toBe(7);
    const counts = Object.fromEntries(
      report.body.rows.map((r: any) => [`${r.keyName}/${r.code}`, r.refusedCalls] as const),
    );
    expect(counts).toEqual({
      'ada-key/BUDGET_EXCEEDED': 2,
      'ada-key/TOOL_NOT_ALLOWED': 2,
      'ada-key/UNKNOWN_TOOL': 1,
      'bob-key/RATE_LIMITED': 2,
    });
    const byTool = await p.admin(
      'GET',
      `/v1/orgs/${orgId}/reports/refusals?${range}&groupBy=tool&code=TOOL_NOT_ALLOWED`,
    );
    expect(byTool.body.rows).toEqual([{ toolName: 'get-tiny-image', refusedCalls: 2 }]);

    // The per-call log: 3 ledger calls and 7 refusals, newest first, the same rows page by page.
    const all = await p.admin('GET', `/v1/orgs/${orgId}/calls?${range}&limit=200`);
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.rows).toHaveLength(10);
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.rows.filter((r: any) => r.outcome === 'REFUSED')).toHaveLength(7);
    expect(
      all.body.rows
        .filter((r: any) => r.outcome === 'OK')
        .map((r: any) => r.id)
        .sort(),
    ).toEqual([...okCalls].sort());
    const times = all.body.rows.map((r: any) => r.occurredAt);
    expect([...times].sort().reverse()).toEqual(times);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await p.admin(
        'GET',
        `/v1/orgs/${orgId}/calls?${range}&limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      expect(page.body.rows.length).toBeLessThanOrEqual(3);
      paged.push(...page.body.rows.map((r: any) => r.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(paged).toEqual(all.body.rows.map((r: any) => r.id));

    // Filters: a key's refusals by code; the blocking budget named on the refused rows.
    const budgetRows = await p.admin(
      'GET',
      `/v1/orgs/${orgId}/calls?${range}&keyId=${ids.keyAda}&code=BUDGET_EXCEEDED`,
    );
    expect(budgetRows.body.rows).toHaveLength(2);
    for (const r of budgetRows.body.rows) {
      expect(r).toMatchObject({ outcome: 'REFUSED', keyName: 'ada-key', toolName: 'echo', budgetId: ids.budget });
      expect(r.upstreamNamespace).toBe('everything');
      expect(r.costMicros).toBe(0);
    }
    const okOnly = await p.admin('GET', `/v1/orgs/${orgId}/calls?${range}&outcome=OK&tool=get-sum`);
    expect(okOnly.body.rows).toHaveLength(2);
    const blocking = await p.admin('GET', `/v1/orgs/${orgId}/reports/refusals/blocking`);
    expect(blocking.status).toBe(200);
    expect(blocking.body.budgets).toEqual([expect.objectContaining({ budgetId: ids.budget, refusedCalls: 2 })]);

    // A member sees only their own calls, and may not ask for another's.
    const mine = await p.admin('GET', `/v1/orgs/${orgId}/calls?${range}`, undefined, memberToken);
    expect(mine.status).toBe(200);
    expect(new Set(mine.body.rows.map((r: any) => r.userId))).toEqual(new Set([ids.bob]));
    expect(mine.body.rows).toHaveLength(4);
    const theirs = await p.admin('GET', `/v1/orgs/${orgId}/calls?${range}&userId=${ids.ada}`, undefined, memberToken);
    expect(theirs.status).toBe(403);
    const mineCounted = await p.admin('GET', `/v1/orgs/${orgId}/reports/refusals?${range}`, undefined, memberToken);
    expect(mineCounted.body.totalRefusedCalls).toBe(2);
    const memberBlocking = await p.admin('GET', `/v1/orgs/${orgId}/reports/refusals/blocking`, undefined, memberToken);
    expect(memberBlocking.body.budgets).toEqual([]);
  });

  it('should answer 400 naming the field for a cursor, outcome, code or groupBy it does not know', async () => {
    for (const [query, field] of [
      ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
      ['outcome=MAYBE', 'outcome'],
      ['code=budget exceeded', 'code'],
      ['limit=0', 'limit'],
    ] as const) {
      const res = await p.admin('GET', `/v1/orgs/${orgId}/calls?${range}&${query}`);
      expect(res.status, query).toBe(400);
      expect(JSON.stringify(res.body), query).toContain(field);
    }
    const res = await p.admin('GET', `/v1/orgs/${orgId}/reports/refusals?${range}&groupBy=day`);
    expect(res.status).toBe(400);
    expect(res.body.field).toBe('groupBy');
  });
});
