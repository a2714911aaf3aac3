import { QueueName } from '@tollgate/queue';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callMeta, connectAgent, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { Browser } from 'playwright-core';
import { eventually, expectAccessible, signInWithToken, saveScreenshot } from '../support/console-browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, FixtureTool, startFixtureServer } from '../fixtures/http-fixture-server';
import { ConsolePlatform, startConsolePlatform } from '../support/console-platform';

const tool = (name: string, description: string, properties: Record<string, object> = {}): FixtureTool => ({
  definition: { name, description, inputSchema: { type: 'object', properties } },
  run: () => ({ content: [{ type: 'text' as const, text: `ran ${name}` }] }),
});

describe('console budgets, upstreams and tools, prices in a real browser', () => {
  let p: ConsolePlatform;
  let fixture: FixtureServer;
  let browser: Browser;
  let orgId: string;
  let upstreamId: string;
  let teamId: string;
  let agent: Client | undefined;
  const tokens: Record<string, string> = {};
  // The fixture lists whatever this array holds at each tools/list.
  const tools: FixtureTool[] = [
    tool('lookup', 'Looks up a word in the dictionary.', { word: { type: 'string' } }),
    tool('translate', 'Translates a text.', { text: { type: 'string' } }),
  ];

  const sync = async () => {
    const res = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [res.body.jobId]);
  };
  type ToolRow = { id: string; name: string; reviewStatus: string; definitionHash: string; pinnedHash: string | null };
  const catalog = async () => (await p.admin('GET', `/v1/orgs/${orgId}/tools`)).body as ToolRow[];

  beforeAll(async () => {
    p = await startConsolePlatform();
    fixture = await startFixtureServer(tools);

    orgId = (
      await p.admin('POST', '/v1/orgs', {
        name: 'Careful',
        slug: 'careful-console',
        autoApproveTools: false,
        timeZone: 'Europe/Paris',
      })
    ).body.id;
    teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'research' })).body.id;
    upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'dict',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
      })
    ).body.id;
    await sync();
    // Both tools approved, then the upstream changes one and adds one: two reviews wait.
    const first = await catalog();
    const approved = await p.admin('POST', `/v1/orgs/${orgId}/tools/review`, {
      decisions: first.map((t) => ({ toolId: t.id, decision: 'APPROVE', definitionHash: t.definitionHash })),
    });
    expect(approved.body.applied).toBe(2);
    tools[0] = tool('lookup', 'Looks up a word in any language.', {
      word: { type: 'string' },
      lang: { type: 'string', description: 'ISO code' },
    });
    tools.push(tool('define', 'Defines a term.', { term: { type: 'string' } }));
    await sync();
    expect(
      (await catalog())
        .filter((t) => t.reviewStatus === 'PENDING')
        .map((t) => t.name)
        .sort(),
    ).toEqual(['define', 'lookup']);

    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId,
          toolPattern: '*',
          perCallMicros: 2_500,
          perOutputTokenMicros: 3,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'ORG',
          scopeId: orgId,
          period: 'MONTH',
          limitMicros: 50_000_000,
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'TEAM',
          scopeId: teamId,
          period: 'WEEK',
          limitMicros: 5_000_000,
          mode: 'SOFT',
          alertThresholds: [50, 80],
        })
      ).status,
    ).toBe(200);
    // Real governed calls through the edge: 3 x 1.25 of the team's 5.00 weekly budget.
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId,
          toolPattern: 'translate',
          perCallMicros: 1_250_000,
        })
      ).status,
    ).toBe(201);
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['dict:*'], deny: [] })).status,
    ).toBe(200);
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'rita@careful.test', name: 'Rita' })).body
      .id;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId })).status).toBe(201);
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'rita-agent' });
    agent = await connectAgent(p.edgeUrl, key.body.secret, 'rita');
    const callIds: string[] = [];
    for (let i = 0; i < 3; i++)
      callIds.push(
        callMeta((await agent.callTool({ name: 'dict__translate', arguments: { text: 'hi' } })) as never)!.callId,
      );
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, callIds);
    tokens.admin = await p.issueToken({ role: 'ORG_ADMIN', orgId, name: 'careful admin' });
    tokens.finance = await p.issueToken({ role: 'FINANCE', orgId, name: 'careful finance' });
    browser = await p.launchBrowser();
  });

  afterAll(async () => {
    await agent?.close();
    await fixture?.close();
    await p?.close();
  });

  it('should show budgets with utilisation and refuse a stale edit with a clear 412, then save a fresh one', async () => {
    const page = await p.openConsole(tokens.admin, '/console/budgets');
    await page.getByTestId('budgets-table').waitFor();
    expect(await page.getByTestId('budget-line').count()).toBe(2);
    expect(await page.getByTestId('budget-bar').count()).toBe(2);
    const teamLine = page.getByTestId('budget-line').filter({ hasText: 'Team research' });
    expect(await teamLine.textContent()).toContain('Soft');
    // Spend against the budget is the ledger's, to the micro-unit.
    expect(await teamLine.getByTestId('budget-spent').getAttribute('data-micros')).toBe('3750000');
    expect(await teamLine.getByTestId('budget-spent').textContent()).toBe('$3.75');
    expect(await teamLine.getByText('(75.0 %)').count()).toBe(1);
    // Each mode badge shows its whole label (cut to "HARD: REFUSES CA…" it hid what the mode does).
    const modeLabels = page.getByTestId('budget-line').locator('.mantine-Badge-label');
    expect(await modeLabels.allTextContents()).toEqual(expect.arrayContaining(['Hard: refuses calls']));
    expect(await modeLabels.evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth).length)).toBe(0);
    await expectAccessible(page, 'budgets');
    await saveScreenshot(page, 'budgets.png', { fullPage: true });

    // Someone else changes the team budget while the form is open: the save is refused, not lost.
    await page.getByRole('button', { name: 'Edit budget of Team research, week' }).click();
    await page.getByTestId('budget-limit-input').fill('7.5');
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'TEAM',
          scopeId: teamId,
          period: 'WEEK',
          limitMicros: 6_000_000,
          mode: 'SOFT',
        })
      ).status,
    ).toBe(200);
    await page.getByTestId('budget-save').click();
    await page.getByTestId('budget-stale').waitFor();
    expect(await page.getByTestId('budget-stale').textContent()).toContain('changed since you opened it');
    await expectAccessible(page, 'budget stale write');
    await page.getByRole('button', { name: 'Reload budgets' }).click();
    const team = page.getByTestId('budget-line').filter({ hasText: 'Team research' });
    await team.getByTestId('budget-limit').getByText('$6.00').waitFor();

    await page.getByRole('button', { name: 'Edit budget of Team research, week' }).click();
    await page.getByTestId('budget-limit-input').fill('7.5');
    await page.getByTestId('budget-save').click();
    await team.getByTestId('budget-limit').getByText('$7.50').waitFor();
    const budgets = (await p.admin('GET', `/v1/orgs/${orgId}/budgets`)).body as {
      scope: string;
      limitMicros: number;
      alertThresholds: number[];
    }[];
    expect(budgets.find((b) => b.scope === 'TEAM')).toMatchObject({
      limitMicros: 7_500_000,
      alertThresholds: [80, 100],
    });
    // Soft says what it does, also once over its limit (3.75 spent of 3.00): calls go on.
    expect(await team.textContent()).toContain('Soft: alerts only');
    const soft = { scope: 'TEAM', scopeId: teamId, period: 'WEEK', limitMicros: 3_000_000, mode: 'SOFT' };
    expect((await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, soft)).status).toBe(200);
    await page.reload();
    await team.getByTestId('budget-state').waitFor();
    expect(await team.getByTestId('budget-state').textContent()).toBe(
      'Over its soft limit: calls go on; its alerts have fired.',
    );

    // A team's monthly budget above the organisation's monthly 50.00: the form warns, and so does the list.
    await page.getByTestId('new-budget').click();
    await page.getByTestId('new-budget-target').click();
    await page.getByRole('option', { name: 'research', exact: true }).click();
    await page.getByTestId('new-budget-limit').fill('50');
    expect(await page.getByTestId('budget-parent-warning').count()).toBe(0); // equal is not above
    await page.getByTestId('new-budget-limit').fill('60');
    const warning = page.getByRole('dialog').getByTestId('budget-parent-warning');
    expect(await warning.textContent()).toBe(
      'Above its parent: Organisation Careful allows $50.00 monthly, so calls stop there first.',
    );
    await expectAccessible(page, 'new budget above its parent');
    await page.getByTestId('new-budget-submit').click();
    const monthly = page.getByTestId('budget-line').filter({ hasText: 'Month' }).filter({ hasText: 'Team research' });
    await monthly.getByTestId('budget-parent-warning').waitFor();
    expect(
      await page
        .getByTestId('budget-line')
        .filter({ hasText: 'Organisation' })
        .filter({ hasNotText: 'Team research' })
        .textContent(),
    ).toContain('Hard: refuses calls');

    // At phone width the budgets page stays usable and accessible.
    const small = await p.openConsole(tokens.admin, '/console/budgets', { width: 390, height: 844 });
    await small.getByTestId('budgets-table').waitFor();
    await expectAccessible(small, 'budgets at 390 px');
  });

  it('should list upstreams and priced tools, approve a change from the side-by-side diff, and show a stale bulk item', async () => {
    const page = await p.openConsole(tokens.admin, '/console/upstreams');
    await page.getByTestId('upstreams-table').waitFor();
    expect(await page.getByTestId('upstream-row').textContent()).toContain('Enabled');
    const lookupRow = page.getByTestId('tool-row').filter({ hasText: 'dict__lookup' });
    expect(await lookupRow.getByTestId('tool-price').textContent()).toBe('$0.0025');
    expect(await page.getByTestId('tool-row').count()).toBe(3);
    await expectAccessible(page, 'upstreams');
    await saveScreenshot(page, 'upstreams.png', { fullPage: true });

    await page.getByTestId('review-tab').click();
    await page.getByTestId('review-upstream').click();
    await page.getByRole('option', { name: 'dict' }).click();
    expect(await page.getByTestId('review-row').count()).toBe(2);
    await page.getByRole('button', { name: 'Show diff of dict__lookup' }).click();
    const diff = page.getByTestId('definition-diff');
    await diff.waitFor();
    expect(await diff.locator('tr[data-kind="changed"] td[data-side="pinned"]').first().textContent()).toContain(
      'in the dictionary',
    );
    expect(await diff.locator('tr[data-kind="changed"] td[data-side="latest"]').first().textContent()).toContain(
      'in any language',
    );
    expect(await diff.locator('td[data-side="latest"]').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('"lang"')]),
    );
    await expectAccessible(page, 'review diff');
    await saveScreenshot(page, 'tool-review-diff.png');
    await page.getByTestId('diff-approve').click();
    await page.getByTestId('review-outcome').getByText('1 approved').waitFor();
    // The queue reloads after the decision: lookup leaves it. Select from the reloaded queue, not the one
    // about to be replaced.
    await eventually(() => page.getByTestId('review-row').count()).toBe(1);
    const lookup = (await catalog()).find((t) => t.name === 'lookup')!;
    expect(lookup.reviewStatus).toBe('APPROVED');
    expect(lookup.pinnedHash).toBe(lookup.definitionHash);

    // The upstream changes `define` after the reviewer saw it: the bulk item comes back STALE, unchanged.
    await page.getByRole('checkbox', { name: 'Select dict__define' }).check();
    tools[2] = tool('define', 'Defines a term, with examples.', { term: { type: 'string' } });
    await sync();
    await page.getByTestId('approve-selected').click();
    const outcome = page.getByTestId('review-outcome');
    await outcome.getByText('0 approved, 1 stale').waitFor();
    expect(await outcome.textContent()).toContain('dict__define');
    expect((await catalog()).find((t) => t.name === 'define')!.reviewStatus).toBe('PENDING');
  });

  it('should show the price history, add a rule and end one, and let finance change nothing', async () => {
    const page = await p.openConsole(tokens.admin, '/console/prices');
    await page.getByTestId('prices-table').waitFor();
    await page.getByTestId('new-price').click();
    await page.getByTestId('price-pattern').fill('lookup');
    // Which rule prices the tool now, and that this one takes it over; a token price per 1K and 1M tokens.
    expect(await page.getByTestId('price-takes-from').textContent()).toBe(
      'Takes over from dict / * ($0.0025 a call): dict__lookup.',
    );
    await page.getByTestId('price-per-call').fill('0.01');
    await page.getByRole('textbox', { name: /Per output token/ }).fill('0.000003');
    expect(await page.getByTestId('price-per-token-scaled').textContent()).toBe(
      '= $0.003 per 1K · $3.00 per 1M tokens',
    );
    await page.getByTestId('price-submit').click();
    const lookupRule = page.getByTestId('price-row').filter({ hasText: 'lookup' });
    await lookupRule.waitFor();
    expect(await lookupRule.getByTestId('price-per-million').textContent()).toBe('$0.003 per 1K · $3.00 per 1M tokens');
    // A broader rule for the same upstream: it supersedes dict / * but lookup stays on its own, more specific rule.
    await page.getByTestId('new-price').click();
    await page.getByTestId('price-pattern').fill('*');
    await page.getByTestId('price-keeps').first().waitFor();
    expect(await page.getByTestId('price-keeps').allTextContents()).toContain(
      'Stays on the more specific dict / lookup: dict__lookup.',
    );
    expect(await page.getByTestId('price-takes-from').textContent()).toMatch(
      /^Takes over from dict \/ \* .*dict__define/,
    );
    await expectAccessible(page, 'new price rule with its effect');
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await lookupRule.textContent()).toContain('$0.01');
    expect(await lookupRule.getByTestId('price-state').textContent()).toBe('in force');

    const star = page.getByTestId('price-row').filter({ has: page.getByRole('cell', { name: '*', exact: true }) });
    await star.getByRole('button', { name: /^End the rule \*/ }).click();
    await page.getByTestId('confirm-end-price').click();
    await star.getByTestId('price-state').getByText('ended').waitFor();
    const history = (await p.admin('GET', `/v1/orgs/${orgId}/prices/history`)).body as {
      toolPattern: string;
      state: string;
      effectiveUntil: string | null;
    }[];
    expect(history.find((r) => r.toolPattern === '*')).toMatchObject({ state: 'ENDED' });
    expect(history.find((r) => r.toolPattern === 'lookup')).toMatchObject({ state: 'IN_FORCE', effectiveUntil: null });
    await expectAccessible(page, 'prices');
    await saveScreenshot(page, 'prices.png', { fullPage: true });

    const fin = await browser.newContext();
    const finPage = await signInWithToken(fin, p.adminUrl, tokens.finance);
    await finPage.getByRole('link', { name: 'Prices' }).click();
    await finPage.getByTestId('prices-table').waitFor();
    expect(await finPage.getByTestId('new-price').count()).toBe(0);
    await finPage.getByRole('link', { name: 'Budgets' }).click();
    await finPage.getByTestId('budgets-table').waitFor();
    expect(await finPage.getByRole('button', { name: /^Edit budget/ }).count()).toBe(0);
    await fin.close();
  });
});
