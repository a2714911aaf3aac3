import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { BaseConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { LedgerService, UsageEvent } from '@tollgate/usage';
import { QueueName } from '@tollgate/queue';
import {
  SERVER_EVERYTHING,
  callMeta,
  connectAgent,
  waitForJobs,
  waitForUsageEvents,
  watchRefusedCalls,
} from '@tollgate/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectAccessible, saveScreenshot } from '../support/console-browser';
import { ConsolePlatform, startConsolePlatform } from '../support/console-platform';

const ECHO_PRICE = 250_000;
/** Older ledger rows of Ada's key, so the log has more than two pages. */
const SEEDED = 120;
/** Ledger rows of another team's key (Cy's, in ops), older still: what the team filter tells apart. */
const OPS_CALLS = 3;

/**
 * Refused calls in the console, by role, against real agents refused by a hard budget, a policy
 * and a rate limit: the Overview counts them per code (equal to the API), the budget that refuses
 * calls says "Blocking now" instead of a date it will run out, and the Calls page lists the
 * ledger's calls and the refusals with filters and keyset pages; axe clean at 1280 and 390 px.
 */
describe('console refusals and the call log in a real browser', () => {
  let p: ConsolePlatform;
  let prisma: PrismaService;
  let orgId: string;
  const ids = { team: '', ops: '', ada: '', bob: '', cy: '', keyAda: '', keyBob: '', keyCy: '', budget: '' };
  const tokens = { finance: '', bob: '' };
  const agents: Client[] = [];

  beforeAll(async () => {
    p = await startConsolePlatform();
    prisma = new PrismaService({ db: { url: p.env.vars.DATABASE_URL } } as BaseConfig);
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Callers', slug: 'callers' })).body.id;
    ids.team = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'agents' })).body.id;
    const secrets: string[] = [];
    for (const name of ['ada', 'bob'] as const) {
      ids[name] = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: `${name}@callers.test` })).body.id;
      expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.team}/members`, { userId: ids[name] })).status).toBe(
        201,
      );
      const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
        teamId: ids.team,
        userId: ids[name],
        name: `${name}-agent`,
      });
      expect(key.status).toBe(201);
      ids[name === 'ada' ? 'keyAda' : 'keyBob'] = key.body.key.id;
      secrets.push(key.body.secret);
    }
    ids.ops = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'ops' })).body.id;
    ids.cy = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'cy@callers.test' })).body.id;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.ops}/members`, { userId: ids.cy })).status).toBe(201);
    const keyCy = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
      teamId: ids.ops,
      userId: ids.cy,
      name: 'cy-agent',
    });
    expect(keyCy.status).toBe(201);
    ids.keyCy = keyCy.body.key.id;
    const everything = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'everything',
      transport: 'STDIO',
      ...SERVER_EVERYTHING,
    });
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${everything.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
      allow: ['everything:*'],
      deny: ['everything:get-tiny-image'],
    });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId: everything.body.id,
      toolPattern: 'echo',
      perCallMicros: ECHO_PRICE,
    });
    // 99 % of it spent after one echo: a linear forecast would put its end in the future.
    const budget = await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
      scope: 'KEY',
      scopeId: ids.keyAda,
      period: 'MONTH',
      limitMicros: ECHO_PRICE + 2_500,
      mode: 'HARD',
    });
    expect(budget.status).toBe(200);
    ids.budget = budget.body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/rate-limits`, {
      scope: 'KEY',
      scopeId: ids.keyBob,
      toolPattern: 'everything:get-sum',
      callsPerWindow: 1,
      windowSeconds: 60,
    });
    const issue = (body: Record<string, unknown>) => p.issueToken({ orgId, ...body });
    tokens.finance = await issue({ role: 'FINANCE', name: 'finance' });
    tokens.bob = await issue({ role: 'MEMBER', userId: ids.bob, name: 'bob' });

    // Older calls of Ada's key, an hour and more ago.
    const events: UsageEvent[] = Array.from({ length: SEEDED }, (_, i) => ({
      id: randomUUID(),
      orgId,
      teamId: ids.team,
      userId: ids.ada,
      keyId: ids.keyAda,
      upstreamId: everything.body.id,
      toolName: 'get-sum',
      outcome: 'OK',
      costMicros: 0n,
      inputTokens: 0,
      outputTokens: 3,
      latencyMs: 5,
      priceRuleId: null,
      occurredAt: new Date(Date.now() - 3_600_000 - i * 1_000),
    }));
    // And Cy's, in ops, two hours and more ago.
    for (let i = 0; i < OPS_CALLS; i++)
      events.push({
        ...events[0],
        id: randomUUID(),
        teamId: ids.ops,
        userId: ids.cy,
        keyId: ids.keyCy,
        occurredAt: new Date(Date.now() - 7_200_000 - i * 1_000),
      });
    expect(await new LedgerService(prisma).writeUsageEvents(events)).toBe(SEEDED + OPS_CALLS);

    for (const secret of secrets) agents.push(await connectAgent(p.edgeUrl, secret));
    const [ada, bob] = agents;
    const watch = await watchRefusedCalls(p.env.redisUrl, p.env.redisPrefix);
    const ok: string[] = [];
    const callOk = async (agent: Client, name: string, args: Record<string, unknown>) => {
      const res = await agent.callTool({ name, arguments: args });
      expect(res.isError ?? false).toBe(false);
      ok.push(callMeta(res as never)!.callId);
    };
    const refused = async (agent: Client, name: string, args: Record<string, unknown>) =>
      expect((await agent.callTool({ name, arguments: args })).isError).toBe(true);
    await callOk(ada, 'everything__echo', { message: 'paid' });
    for (let i = 0; i < 3; i++) await refused(ada, 'everything__echo', { message: 'over' });
    await refused(ada, 'everything__get-tiny-image', {});
    await callOk(bob, 'everything__get-sum', { a: 1, b: 2 });
    for (let i = 0; i < 2; i++) await refused(bob, 'everything__get-sum', { a: 1, b: 2 });
    await watch.written(6);
    await watch.close();
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, ok);
  });

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.close()));
    await prisma?.onApplicationShutdown();
    await p?.close();
  });

  it('should count refusals on the Overview, say which budget blocks now, and open them in the call log', async () => {
    const page = await p.openConsole(tokens.finance, '/console/');
    const panel = page.getByTestId('overview-refusals');
    await panel.getByTestId('overview-refused-total').waitFor();
    expect(await panel.getByTestId('overview-refused-total').textContent()).toBe('6');
    const byCode = Object.fromEntries(
      await panel
        .getByTestId('refusals-by-code')
        .locator('tbody tr')
        .evaluateAll((trs) =>
          trs.map((tr) => [tr.getAttribute('data-code'), tr.querySelectorAll('td')[1].textContent] as const),
        ),
    );
    expect(byCode).toEqual({ BUDGET_EXCEEDED: '3', RATE_LIMITED: '2', TOOL_NOT_ALLOWED: '1' });

    // The key budget has 2,500 left, less than an echo: it refuses now, and says so instead of a date.
    const row = page.getByTestId('budget-row').filter({ hasText: 'ada-agent' });
    await row.getByTestId('budget-blocking').waitFor();
    const forecast = await row.getByTestId('budget-forecast').textContent();
    expect(forecast).toContain('Blocking now: 3 calls refused');
    expect(forecast).not.toContain('runs out');
    await expectAccessible(page, 'overview with refusals');

    await panel.getByRole('link', { name: 'Budget exceeded' }).click();
    await page.waitForURL(/\/console\/calls\?/);
    const rows = page.getByTestId('call-row');
    await eventually(() => rows.count()).toBe(3);
    expect(new Set(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-code'))))).toEqual(
      new Set(['BUDGET_EXCEEDED']),
    );
    expect(await rows.first().textContent()).toContain('ada-agent');

    await page.goto(`${p.adminUrl}/console/budgets`);
    const line = page.getByTestId('budget-line').filter({ hasText: 'ada-agent' });
    await line.getByTestId('budget-blocking').waitFor();
    expect(await line.getByTestId('budget-blocking').textContent()).toContain('3 calls refused');
  });

  it('should page through the whole log with Older and Newer, newest first, and filter by key and outcome', async () => {
    const page = await p.openConsole(tokens.finance, '/console/calls');
    const rows = page.getByTestId('call-row');
    const summary = page.getByTestId('calls-summary');
    const rowTexts = () => rows.evaluateAll((trs) => trs.map((tr) => tr.textContent ?? ''));
    /**
     * The rows of page `n` once it has loaded. A click on Older first renders the new page's number over the
     * last page's rows, then loads: wait for the number and for rows other than `last` (pages share no row).
     */
    const pageRows = async (n: number, last: string[]) => {
      let shown: string[] = [];
      await eventually(async () => {
        shown = await rowTexts();
        const says = (await summary.textContent()) ?? '';
        return says.startsWith(`Page ${n}: `) && shown.length > 0 && shown.join('\n') !== last.join('\n');
      }).toBe(true);
      return shown;
    };
    const total = SEEDED + OPS_CALLS + 2 + 6;
    const seen: string[] = [];
    const firstPage = await pageRows(1, []);
    for (let n = 1, shown = firstPage; ; n++) {
      seen.push(...shown);
      if (await page.getByTestId('calls-older').isDisabled()) break;
      await page.getByTestId('calls-older').click();
      shown = await pageRows(n + 1, shown);
    }
    expect(seen).toHaveLength(total);
    expect(await summary.textContent()).toContain(`Page 3: ${total - 100} calls`);
    await page.getByTestId('calls-newer').click();
    await page.getByTestId('calls-newer').click();
    await eventually(() => summary.textContent()).toContain('Page 1: 50 calls');
    // The first page's own rows again (not page 2's under page 1's number, before it loads).
    await eventually(rowTexts).toEqual(firstPage);

    // Bob's key, refused calls only.
    await page.getByTestId('calls-key').click();
    await page.getByRole('option', { name: /^bob-agent/ }).click();
    await page.getByTestId('calls-outcome').click();
    await page.getByRole('option', { name: 'Refused' }).click();
    await eventually(() => rows.count()).toBe(2);
    expect(await rows.first().textContent()).toContain('Rate limited');
    expect(page.url()).toContain(`keyId=${ids.keyBob}`);
    await expectAccessible(page, 'call log');
    await saveScreenshot(page, 'call-log.png', { fullPage: true });
  });

  it('should filter the log by team, from a link and from the Team list', async () => {
    // A link naming a team (as a bookmark or a shared view would): only that team's calls, and the
    // filter shows it by name.
    const page = await p.openConsole(tokens.finance, `/console/calls?teamId=${ids.ops}`);
    const rows = page.getByTestId('call-row');
    await page.getByTestId('calls-table').waitFor();
    await eventually(() => rows.count()).toBe(OPS_CALLS);
    for (const text of await rows.evaluateAll((trs) => trs.map((tr) => tr.textContent ?? '')))
      expect(text).toContain('cy-agent');
    expect(page.url()).toContain(`teamId=${ids.ops}`);
    await eventually(() => page.getByTestId('calls-team').inputValue()).toBe('ops');

    // The other team from the list: none of Cy's calls, a full first page of the agents team's.
    await page.getByTestId('calls-team').click();
    await page.getByRole('option', { name: 'agents' }).click();
    await eventually(() => page.url()).toContain(`teamId=${ids.team}`);
    await eventually(() => rows.count()).toBe(50);
    for (const text of await rows.evaluateAll((trs) => trs.map((tr) => tr.textContent ?? '')))
      expect(text).not.toContain('cy-agent');
    await expectAccessible(page, 'call log filtered by team');
  });

  it('should show a member only their own calls, on a phone', async () => {
    const page = await p.openConsole(tokens.bob, '/console/calls', { width: 390, height: 844 });
    const rows = page.getByTestId('call-row');
    await page.getByTestId('calls-table').waitFor();
    await eventually(() => rows.count()).toBe(3);
    for (const text of await rows.evaluateAll((trs) => trs.map((tr) => tr.textContent ?? '')))
      expect(text).toContain('bob-agent');
    expect(await page.getByTestId('calls-user').count()).toBe(0);
    expect(await page.getByTestId('calls-team').count()).toBe(0);
    await expectAccessible(page, 'call log at 390 px');
  });
});
