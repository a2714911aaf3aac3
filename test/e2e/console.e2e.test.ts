import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from '@prisma/client';
import { JobName, QueueName } from '@tollgate/queue';
import { callMeta, connectAgent, waitForJobs, waitForUsageEvents, testBullOptions } from '@tollgate/testing';
import { Queue } from 'bullmq';
import { readFile } from 'node:fs/promises';
import { Browser } from 'playwright-core';
import {
  decimalToMicros,
  eventually,
  expectAccessible,
  expectNotInVerticalScrollBox,
  parseCsv,
  saveScreenshot,
} from '../support/console-browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { ConsolePlatform, startConsolePlatform } from '../support/console-platform';

const PRICE = 125_000; // 0.125 per call: sums that floats would not keep exact at scale
const BIG_PRICE = 1_234_567;
const utcDay = (d = new Date()) => d.toISOString().slice(0, 10);

describe('console in a real browser', () => {
  let p: ConsolePlatform;
  let db: PrismaClient;
  let fixture: FixtureServer;
  let browser: Browser;
  let orgId: string;
  const agents: Client[] = [];
  const ids = { data: '', web: '', ada: '', bob: '', upstream: '' };
  const tokens = { admin: '', finance: '', member: '', teamAdmin: '' };

  /** The ledger's own sums over [from, to] (UTC days: the org's zone here), optionally for some calls only. */
  async function ledger(from: string, to: string, only: Prisma.UsageEventWhereInput = {}) {
    const rows = await db.usageEvent.findMany({
      where: {
        orgId,
        ...only,
        occurredAt: { gte: new Date(`${from}T00:00:00Z`), lt: new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000) },
      },
    });
    return {
      calls: rows.length,
      errors: rows.filter((r) => r.outcome !== 'OK').length,
      costMicros: rows.reduce((s, r) => s + r.costMicros, 0n),
    };
  }

  beforeAll(async () => {
    p = await startConsolePlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startFixtureServer();

    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Acme', slug: 'acme' })).body.id;
    // The org's currency names the unit of every amount the console shows.
    const badCurrency = await p.admin('PATCH', `/v1/orgs/${orgId}`, { currency: 'euro' });
    expect(badCurrency.status).toBe(400);
    expect(badCurrency.body.field).toBe('currency');
    const eur = await p.admin('PATCH', `/v1/orgs/${orgId}`, { currency: 'EUR' });
    expect([eur.status, eur.body.currency]).toEqual([200, 'EUR']);
    ids.data = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'data, science' })).body.id;
    ids.web = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'web' })).body.id;
    ids.ada = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'ada@acme.test', name: 'Ada' })).body.id;
    ids.bob = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'bob@acme.test', name: 'Bob' })).body.id;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.data}/members`, { userId: ids.ada })).status).toBe(
      201,
    );
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.web}/members`, { userId: ids.bob })).status).toBe(201);
    const keyA = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
      teamId: ids.data,
      userId: ids.ada,
      name: 'ada-agent',
    });
    const keyB = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
      teamId: ids.web,
      userId: ids.bob,
      name: 'bob-agent',
    });
    const up = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'fx',
      transport: 'STREAMABLE_HTTP',
      url: fixture.url,
    });
    ids.upstream = up.body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${ids.upstream}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fx:*'], deny: [] })).status,
    ).toBe(200);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: ids.upstream,
          toolPattern: '*',
          perCallMicros: PRICE,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: ids.upstream,
          toolPattern: 'huge',
          perCallMicros: BIG_PRICE,
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
          scopeId: ids.data,
          period: 'MONTH',
          limitMicros: 5_000_000,
          mode: 'SOFT',
        })
      ).status,
    ).toBe(200);
    // bob's two calls (0.25) cross 80 % of this one: an alert fired this month.
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'TEAM',
          scopeId: ids.web,
          period: 'MONTH',
          limitMicros: 300_000,
          mode: 'SOFT',
        })
      ).status,
    ).toBe(200);

    tokens.admin = await p.issueToken({ role: 'ORG_ADMIN', orgId, name: 'acme admin' });
    tokens.finance = await p.issueToken({ role: 'FINANCE', orgId, name: 'acme finance' });
    tokens.member = await p.issueToken({ role: 'MEMBER', orgId, userId: ids.ada, teamId: ids.data, name: 'ada' });
    tokens.teamAdmin = await p.issueToken({ role: 'TEAM_ADMIN', orgId, teamId: ids.web, name: 'web lead' });

    // Real governed calls through the edge: ada 3 ok (one priced higher) + 1 tool error, bob 2 ok.
    const callIds: string[] = [];
    const a = await connectAgent(p.edgeUrl, keyA.body.secret, 'ada');
    const b = await connectAgent(p.edgeUrl, keyB.body.secret, 'bob');
    agents.push(a, b);
    for (const [agent, tool] of [
      [a, 'fx__ping'],
      [a, 'fx__ping'],
      [a, 'fx__huge'],
      [a, 'fx__fail'],
      [b, 'fx__ping'],
      [b, 'fx__ping'],
    ] as const) {
      const res = await agent.callTool({ name: tool, arguments: tool === 'fx__huge' ? { lines: 5 } : {} });
      callIds.push(callMeta(res as never)!.callId);
    }
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, callIds);
    const alertQueue = new Queue(QueueName.BudgetAlerts, testBullOptions(p.env.redisUrl, p.env.redisPrefix));
    const check = await alertQueue.add(JobName.CheckBudgetAlerts, { orgId }, { jobId: `console-check-${Date.now()}` });
    await alertQueue.close();
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.BudgetAlerts, [check.id!]);
    browser = await p.launchBrowser();
  });

  afterAll(async () => {
    for (const a of agents) await a.close();
    await fixture?.close();
    await db?.$disconnect();
    await p?.close();
  });

  it('should serve the console on the admin origin with cache headers and a CSP', async () => {
    const root = await fetch(`${p.adminUrl}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/console/');
    const page = await fetch(`${p.adminUrl}/console/explorer`);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const asset = (await page.text()).match(/\/console\/assets\/[^"]+\.js/)![0];
    const js = await fetch(`${p.adminUrl}${asset}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${p.adminUrl}/console/assets/missing.js`)).status).toBe(404);
  });

  it('should sign in with an admin token and refuse a wrong one', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${p.adminUrl}/console/`);
    await page.getByLabel('Admin token').fill('tga_not-a-real-token');
    await page.getByRole('button', { name: 'Sign in with token' }).click();
    await page.getByText('That token is not valid').waitFor();
    await expectAccessible(page, 'sign-in');
    await page.getByLabel('Admin token').fill('');
    await saveScreenshot(page, 'sign-in.png');
    await context.close();
  });

  it('should show an overview whose spend, calls and errors equal the ledger for this month', async () => {
    const page = await p.openConsole(tokens.admin, '/', { width: 1280, height: 1100 });
    const today = utcDay();
    const sums = await ledger(`${today.slice(0, 8)}01`, today);
    expect(sums).toMatchObject({ calls: 6, errors: 1, costMicros: BigInt(4 * PRICE + BIG_PRICE) });

    const spend = page.getByTestId('overview-total-spend');
    await spend.waitFor();
    expect(await spend.getAttribute('data-micros')).toBe(String(sums.costMicros));
    expect(await spend.textContent()).toBe('€1.734567');
    expect(await page.getByTestId('overview-calls').textContent()).toBe('6');
    expect(await page.getByTestId('overview-error-rate').textContent()).toBe('16.7 %');
    // Budgets: org and team, each with a forecast (the budgets and their names arrive with their own requests).
    await eventually(() => page.getByTestId('budget-row').count()).toBe(3);
    await eventually(() => page.getByText('Organisation Acme').count()).toBe(1);
    await eventually(() => page.getByText('Team data, science').count()).toBe(1);
    await eventually(() => page.getByTestId('budget-forecast').first().textContent()).toMatch(
      /runs out on|passes its soft limit on|lasts until the period resets/,
    );
    // Alerts fired this month: the web team's budget crossed 80 % with 0.25 spent.
    const alert = page.getByTestId('alert-row');
    await alert.first().waitFor();
    expect(await alert.count()).toBe(1);
    // The budget's name comes from the budgets' and the names' requests, which may answer after the alerts'.
    await eventually(() => alert.textContent()).toMatch(/Team web \(monthly\).*80 %.*€0\.25/);
    // Top tools: the dearer tool first.
    expect(await page.getByTestId('top-tools').locator('tbody tr').first().textContent()).toContain('fx / huge');
    await page.locator('.recharts-bar-rectangle').first().waitFor();
    await expectAccessible(page, 'overview');
    await saveScreenshot(page, 'overview.png', { fullPage: true });
  });

  it('should explore spend with totals equal to the report API and the ledger, and download exactly the table as CSV', async () => {
    const page = await p.openConsole(tokens.finance, '/console/explorer', { width: 1280, height: 1000 });
    const from = `${utcDay().slice(0, 8)}01`; // the explorer opens on the month to date, as the overview
    const to = utcDay();
    const total = page.getByTestId('explorer-total-cost');
    await total.waitFor();
    const sums = await ledger(from, to);
    const api = await p.admin(
      'GET',
      `/v1/orgs/${orgId}/reports/spend?from=${from}&to=${to}&groupBy=team,day`,
      undefined,
      tokens.finance,
    );
    expect(await total.getAttribute('data-micros')).toBe(String(sums.costMicros));
    expect(String(api.body.totals.costMicros)).toBe(String(sums.costMicros));
    expect(api.body.currency).toBe('EUR');
    expect(await page.getByTestId('explorer-row').count()).toBe(api.body.rows.length);
    // Grouped by team and day: each team's days end in its subtotal, equal to that team's ledger sum.
    const teamRows = new Set(api.body.rows.map((r: { teamId: string }) => r.teamId));
    const subtotals = page.getByTestId('explorer-table-subtotal');
    expect(await subtotals.count()).toBe(teamRows.size);
    for (const teamId of teamRows) {
      const team = (await db.team.findUniqueOrThrow({ where: { id: teamId as string } })).name;
      const teamCost = (await db.usageEvent.findMany({ where: { orgId, teamId: teamId as string } })).reduce(
        (s, r) => s + r.costMicros,
        0n,
      );
      const line = subtotals.filter({ hasText: `Subtotal ${team} (` });
      expect(await line.locator('[data-micros]').getAttribute('data-micros')).toBe(String(teamCost));
    }
    // Money at one precision (four decimals), the exact amount on hover; the total line is not in a scroll box.
    const totalCell = page.getByTestId('explorer-table-total').locator('[data-micros]');
    expect(await totalCell.textContent()).toMatch(/^€[\d,]+\.\d{4}$/);
    expect(await totalCell.getAttribute('title')).toMatch(/^\d+\.\d+ EUR exactly$/);
    await expectNotInVerticalScrollBox(page.getByTestId('explorer-table-total'));

    // Sorted by cost, highest first, then lowest first: the rows follow (subtotals travel with their group).
    await page.getByTestId('explorer-table-sort-costMicros').click();
    const costs = async () =>
      (await page
        .getByTestId('explorer-row')
        .locator('td [data-micros]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-micros')))) as string[];
    const desc = await costs();
    await eventually(() => page.getByRole('columnheader', { name: /Cost/ }).getAttribute('aria-sort')).toBe(
      'descending',
    );
    await page.getByTestId('explorer-table-sort-costMicros').click();
    await eventually(() => page.getByRole('columnheader', { name: /Cost/ }).getAttribute('aria-sort')).toBe(
      'ascending',
    );
    expect((await costs()).length).toBe(desc.length);

    // Group by user instead of team and day: the table follows.
    const groupBy = page.getByRole('group', { name: 'Group by' });
    await groupBy.getByText('Team', { exact: true }).click();
    await groupBy.getByText('Day', { exact: true }).click();
    await groupBy.getByText('User', { exact: true }).click();
    await page.getByTestId('explorer-table').getByText('ada@acme.test').waitFor();
    expect(await page.getByTestId('explorer-row').count()).toBe(2);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('explorer-download').click(),
    ]);
    const csv = parseCsv(await readFile((await download.path())!, 'utf8'));
    // Names and their ids, the figures (cost exact), then what every line counts: period, zone, currency.
    expect(csv[0]).toEqual([
      'User',
      'User id',
      'Team',
      'Team id',
      'Calls',
      'Errors',
      'Output tokens',
      'Cost (EUR)',
      'From',
      'To',
      'Time zone',
      'Currency',
    ]);
    const body = csv.slice(1, -1);
    const footer = csv[csv.length - 1];
    expect(body.map((r) => r[0]).sort()).toEqual(['ada@acme.test', 'bob@acme.test']);
    expect(body.find((r) => r[0] === 'ada@acme.test')![1]).toBe(ids.ada);
    expect(footer[0]).toBe('Total');
    expect(decimalToMicros(footer[7])).toBe(sums.costMicros);
    expect(body.reduce((s, r) => s + decimalToMicros(r[7]), 0n)).toBe(sums.costMicros);
    expect(Number(footer[4])).toBe(sums.calls);
    expect(Number(footer[5])).toBe(sums.errors);
    for (const line of csv.slice(1)) expect(line.slice(8)).toEqual([from, to, api.body.timeZone, 'EUR']);
    // Each line equals the ledger for that user.
    const adaCost = (await db.usageEvent.findMany({ where: { orgId, userId: ids.ada } })).reduce(
      (s, r) => s + r.costMicros,
      0n,
    );
    expect(decimalToMicros(body.find((r) => r[0] === 'ada@acme.test')![7])).toBe(adaCost);

    await groupBy.getByText('Day', { exact: true }).click();
    await page.locator('.recharts-bar-rectangle').first().waitFor();
    await expectAccessible(page, 'spend explorer');
    // Finance reads everything and changes nothing: no way to issue a key.
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByTestId('keys-table').waitFor();
    expect(await page.getByTestId('issue-key').count()).toBe(0);
  });

  it('should issue a key whose secret is shown once and works at the edge, then revoke it', async () => {
    const page = await p.openConsole(tokens.admin, '/console/keys');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: p.adminUrl });
    await page.getByTestId('keys-table').waitFor();
    expect(await page.getByTestId('key-row').count()).toBe(2);
    await expectAccessible(page, 'keys');
    await saveScreenshot(page, 'keys.png', { fullPage: true });

    await page.getByTestId('issue-key').click();
    await page.getByTestId('key-name').fill('console-made');
    await page.getByTestId('key-team').click();
    await page.getByRole('option', { name: 'web' }).click();
    await page.getByTestId('key-owner').click();
    await page.getByRole('option', { name: 'Bob (bob@acme.test)' }).click();
    // Its tags and its own budget in the same form.
    await page.getByTestId('issue-key-tags').fill('project:nova');
    await page.keyboard.press('Enter');
    await page.getByTestId('issue-key-budget').fill('2.5x');
    expect(await page.getByTestId('key-submit').isDisabled()).toBe(true);
    await page.getByTestId('issue-key-budget').fill('2.5');
    await page.getByTestId('issue-key-budget-period').click();
    await page.getByRole('option', { name: 'Week' }).click();
    await expectAccessible(page, 'issue key form');
    await page.getByTestId('key-submit').click();
    await page.getByTestId('issued-secret').or(page.getByRole('dialog').getByRole('alert')).waitFor();
    expect(await page.getByRole('dialog').getByRole('alert').allTextContents()).toEqual([]);
    expect(await page.getByRole('dialog').getByText('This is the only time the secret is shown').count()).toBe(1);
    const secret = (await page.getByTestId('issued-secret').textContent())!.trim();
    expect(secret).toMatch(/^tg_/);
    await page.getByTestId('copy-secret').click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await expectAccessible(page, 'issued key');

    const made = (
      (await p.admin('GET', `/v1/orgs/${orgId}/keys`, undefined, tokens.admin)).body as {
        id: string;
        name: string;
        tags: string[];
      }[]
    ).find((k) => k.name === 'console-made')!;
    expect(made.tags).toEqual(['project:nova']);
    const madeLimits = (await p.admin('GET', `/v1/orgs/${orgId}/keys/${made.id}/limits`, undefined, tokens.admin)).body;
    expect(madeLimits.budgets).toMatchObject([{ period: 'WEEK', mode: 'HARD', limitMicros: 2_500_000 }]);

    // The secret is a real key: the edge lists its tools.
    const agent = await connectAgent(p.edgeUrl, secret, 'console-made');
    agents.push(agent);
    expect((await agent.listTools()).tools.map((t) => t.name)).toContain('fx__ping');

    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.getByTestId('key-row').filter({ hasText: 'console-made' });
    await row.waitFor();

    // Rotate: a new secret for the same key, shown once; the old one is refused at once.
    await row.getByRole('button', { name: 'Rotate console-made' }).click();
    await page.getByTestId('confirm-rotate').click();
    await page.getByTestId('issued-secret').waitFor();
    const rotated = (await page.getByTestId('issued-secret').textContent())!.trim();
    expect(rotated).toMatch(/^tg_/);
    expect(rotated).not.toBe(secret);
    await expect(connectAgent(p.edgeUrl, secret, 'old-secret')).rejects.toThrow();
    const renewed = await connectAgent(p.edgeUrl, rotated, 'rotated');
    agents.push(renewed);
    expect((await renewed.listTools()).tools.map((t) => t.name)).toContain('fx__ping');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('key-row').filter({ hasText: 'console-made' }).count()).toBe(1);

    await row.getByRole('button', { name: 'Revoke console-made' }).click();
    await page.getByTestId('confirm-revoke').click();
    await row.waitFor({ state: 'detached' });
    const keys = (await p.admin('GET', `/v1/orgs/${orgId}/keys`, undefined, tokens.admin)).body as {
      name: string;
      revokedAt: string | null;
    }[];
    expect(keys.find((k) => k.name === 'console-made')!.revokedAt).not.toBeNull();
  });

  it('should tag a key, set its limits and disclosure, then filter and group the explorer by that tag', async () => {
    const page = await p.openConsole(tokens.admin, '/console/keys', { width: 1280, height: 1000 });
    const row = page.getByTestId('key-row').filter({ hasText: 'ada-agent' });
    await row.getByRole('button', { name: 'Settings of ada-agent' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByTestId('key-limits').waitFor();
    await dialog.getByLabel('Tags').fill('project:atlas');
    await dialog.getByLabel('Tags').press('Enter');
    await dialog.getByTestId('key-disclosure').click();
    await page.getByRole('option', { name: 'Progressive: search, then load' }).click();
    await dialog.getByTestId('key-budget-amount').fill('2.5');
    await dialog.getByTestId('key-budget-save').click();
    await dialog.getByTestId('key-budget').waitFor();
    expect(await dialog.getByTestId('key-budget').textContent()).toContain('€2.50');
    await dialog.getByTestId('key-rate-save').click();
    await dialog.getByTestId('key-rate-limit').waitFor();
    await expectAccessible(page, 'key settings');
    await dialog.getByTestId('key-settings-save').click();
    await dialog.waitFor({ state: 'detached' });
    await row.getByText('project:atlas').waitFor();

    const keys = (await p.admin('GET', `/v1/orgs/${orgId}/keys`, undefined, tokens.admin)).body as {
      id: string;
      name: string;
      tags: string[];
      disclosureMode: string;
    }[];
    const ada = keys.find((k) => k.name === 'ada-agent')!;
    expect([ada.tags, ada.disclosureMode]).toEqual([['project:atlas'], 'PROGRESSIVE']);
    const limits = (await p.admin('GET', `/v1/orgs/${orgId}/keys/${ada.id}/limits`, undefined, tokens.admin)).body;
    expect(limits.budgets.map((b: { limitMicros: number }) => b.limitMicros)).toEqual([2_500_000]);
    expect(limits.rateLimits.map((r: { callsPerWindow: number }) => r.callsPerWindow)).toEqual([60]);

    // Grouped by key tag: one row per tag (untagged keys in their own), the tag's row is its key's ledger sum.
    const adaCost = (await db.usageEvent.findMany({ where: { orgId, keyId: ada.id } })).reduce(
      (s, r) => s + r.costMicros,
      0n,
    );
    await page.getByRole('link', { name: 'Spend explorer' }).click();
    const total = page.getByTestId('explorer-total-cost');
    await total.waitFor();
    const groupBy = page.getByRole('group', { name: 'Group by' });
    await groupBy.getByText('Team', { exact: true }).click();
    await groupBy.getByText('Day', { exact: true }).click();
    await groupBy.getByText('Key tag', { exact: true }).click();
    const tagRow = page.getByTestId('explorer-row').filter({ hasText: 'project:atlas' });
    await tagRow.waitFor();
    expect(await page.getByTestId('explorer-row').allTextContents()).toHaveLength(2);
    expect(await tagRow.locator('[data-micros]').getAttribute('data-micros')).toBe(String(adaCost));

    // Filtered by that tag: the total is the tagged key's ledger sum, as the report API says.
    await page.getByTestId('explorer-filter-tag').click();
    await page.getByRole('option', { name: 'project:atlas' }).click();
    await page.keyboard.press('Escape');
    await eventually(() => total.getAttribute('data-micros')).toBe(String(adaCost));
    const from = `${utcDay().slice(0, 8)}01`; // the explorer opens on the month to date, as the overview
    const api = await p.admin(
      'GET',
      `/v1/orgs/${orgId}/reports/spend?from=${from}&to=${utcDay()}&tag=project:atlas`,
      undefined,
      tokens.admin,
    );
    expect(String(api.body.totals.costMicros)).toBe(String(adaCost));
    // And by team too (filters AND): bob's team has no tagged spend.
    await page.getByTestId('explorer-filter-teamId').click();
    await page.getByRole('option', { name: 'web' }).click();
    await page.keyboard.press('Escape');
    await page.getByText('No calls match these filters in this range').waitFor();
    await expectAccessible(page, 'explorer filtered by tag');
  });

  it('should explore with the report API’s filters, totals equal to the ledger, and restore the view from its URL', async () => {
    const page = await p.openConsole(tokens.finance, '/console/explorer', { width: 1280, height: 1000 });
    const total = page.getByTestId('explorer-total-cost');
    await total.waitFor();
    const from = `${utcDay().slice(0, 8)}01`; // the explorer opens on the month to date, as the overview
    const to = utcDay();

    // Two users (values OR) and one tool (filters AND): ada's and bob's pings.
    for (const name of ['Ada', 'Bob']) {
      await page.getByTestId('explorer-filter-userId').click();
      await page.getByRole('option', { name }).click();
    }
    await page.keyboard.press('Escape');
    await page.getByTestId('explorer-filter-tool').click();
    await page.getByRole('option', { name: 'ping', exact: true }).click();
    await page.keyboard.press('Escape');
    const pings = await ledger(from, to, { userId: { in: [ids.ada, ids.bob] }, toolName: 'ping' });
    expect(pings.calls).toBe(4);
    await eventually(() => total.getAttribute('data-micros')).toBe(String(pings.costMicros));
    const footer = page.getByTestId('explorer-table-total').locator('th');
    expect(await footer.nth(1).textContent()).toBe(String(pings.calls));
    // The report API answers the same for the same filter, and echoes it.
    const q = `from=${from}&to=${to}&groupBy=team,day&userId=${ids.ada},${ids.bob}&tool=ping`;
    const api = await p.admin('GET', `/v1/orgs/${orgId}/reports/spend?${q}`, undefined, tokens.finance);
    expect(api.status).toBe(200);
    expect(String(api.body.totals.costMicros)).toBe(String(pings.costMicros));
    expect(api.body.scope.kind).toBe('org');

    // The page's address holds the view: opened again, it shows the same filtered report.
    const url = new URL(page.url());
    expect(url.pathname).toBe('/console/explorer');
    expect(url.searchParams.get('tool')).toBe('ping');
    expect(url.searchParams.get('userId')!.split(',').sort()).toEqual([ids.ada, ids.bob].sort());
    // (A full navigation in the same tab: the token is kept per tab.)
    const again = page;
    await again.goto(`${p.adminUrl}/console/`);
    await again.getByTestId('overview-total-spend').waitFor();
    await again.goto(url.toString());
    const restored = again.getByTestId('explorer-total-cost');
    await restored.waitFor();
    expect(await restored.getAttribute('data-micros')).toBe(String(pings.costMicros));
    expect(await again.getByTestId('explorer-filter-tool').locator('xpath=..').textContent()).toContain('ping');
    await again.getByText('Filtered by user, tool').waitFor();
    await again.locator('.recharts-bar-rectangle').first().waitFor();
    await expectAccessible(again, 'explorer filtered by users and tool');
    await saveScreenshot(again, 'spend-explorer.png', { fullPage: true });

    // The CSV is what is shown: the filtered rows and their total.
    const [download] = await Promise.all([
      again.waitForEvent('download'),
      again.getByTestId('explorer-download').click(),
    ]);
    const csv = parseCsv(await readFile((await download.path())!, 'utf8'));
    expect(csv[0].slice(0, 7)).toEqual(['Team', 'Team id', 'Day', 'Calls', 'Errors', 'Output tokens', 'Cost (EUR)']);
    expect(csv[csv.length - 1][0]).toBe('Total');
    expect(decimalToMicros(csv[csv.length - 1][6])).toBe(pings.costMicros);

    // A filter nothing matches: the designed empty state, with a way back.
    await again.goto(`${p.adminUrl}/console/explorer?tool=no-such-tool`);
    await again.getByText('No calls match these filters in this range').waitFor();
    await again.getByTestId('explorer-clear').first().click();
    await again.getByTestId('explorer-total-cost').waitFor();
    expect(new URL(again.url()).search).toBe('');
  }, 150_000); // filters, two navigations and a download: on a busy two-core machine it outlasts a minute

  it('should show a team admin only their team: overview and explorer totals equal the ledger for that team', async () => {
    const page = await p.openConsole(tokens.teamAdmin, '/', { width: 1280, height: 1000 });
    const today = utcDay();
    const month = await ledger(`${today.slice(0, 8)}01`, today, { teamId: ids.web });
    expect(month.calls).toBe(2);
    const spend = page.getByTestId('overview-total-spend');
    await spend.waitFor();
    await eventually(() => page.getByTestId('scope-note').textContent()).toContain('Your team: web');
    expect(await spend.getAttribute('data-micros')).toBe(String(month.costMicros));
    expect(await page.getByTestId('overview-calls').textContent()).toBe(String(month.calls));
    // Its team's budget, no org budget and no other team's; no org alerts.
    // (and the KEY budgets of its team's keys: the key issued earlier in this file has one).
    // The budgets and their names arrive with their own requests: wait for the team's row to be named.
    const budgetRows = page.getByTestId('budget-row');
    await eventually(async () => (await budgetRows.allTextContents()).filter((r) => r.startsWith('Team'))).toEqual([
      expect.stringContaining('Team web'),
    ]);
    expect((await budgetRows.allTextContents()).every((r) => r.startsWith('Team web') || r.startsWith('Key '))).toBe(
      true,
    );
    expect(await page.getByTestId('overview-alerts').count()).toBe(0);
    await page.getByRole('radio', { name: 'By user' }).waitFor({ state: 'attached' });
    // The ranking of users is a report of its own.
    await eventually(() => page.getByTestId('top-users').locator('tbody tr').allTextContents()).toEqual([
      expect.stringContaining('bob@acme.test'),
    ]);
    await page.locator('.recharts-bar-rectangle').first().waitFor();
    await expectAccessible(page, 'overview (team admin)');

    await page.getByRole('link', { name: 'Spend explorer' }).click();
    const total = page.getByTestId('explorer-total-cost');
    await total.waitFor();
    const from = `${utcDay().slice(0, 8)}01`; // the explorer opens on the month to date, as the overview
    const sums = await ledger(from, today, { teamId: ids.web });
    expect(await total.getAttribute('data-micros')).toBe(String(sums.costMicros));
    expect(await page.getByTestId('explorer-filter-teamId').count()).toBe(0);
    await eventually(() => page.getByTestId('scope-note').textContent()).toContain('Your team: web');
    expect(await page.getByTestId('explorer-table').textContent()).not.toContain('ada@acme.test');
    await expectAccessible(page, 'explorer (team admin)');

    // Another team's spend by URL: the API refuses, the page says so and offers a retry.
    await page.goto(`${p.adminUrl}/console/explorer?teamId=${ids.data}`);
    await page.getByTestId('error-state').waitFor();
    expect(await page.getByTestId('error-state').textContent()).toContain('Your role may not see this');

    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByTestId('keys-table').waitFor();
    const names = await page.getByTestId('key-row').locator('td:first-child').allTextContents();
    expect(names).toEqual(['bob-agent']);
    await expectAccessible(page, 'keys (team admin)');
  });

  it('should show a member only their own usage and keys', async () => {
    const page = await p.openConsole(tokens.member, '/', { width: 1280, height: 1000 });
    const today = utcDay();
    const month = await ledger(`${today.slice(0, 8)}01`, today, { userId: ids.ada });
    expect(month.calls).toBe(4);
    const spend = page.getByTestId('overview-total-spend');
    await spend.waitFor();
    expect(await page.getByTestId('scope-note').textContent()).toContain('Your own usage');
    expect(await spend.getAttribute('data-micros')).toBe(String(month.costMicros));
    // Only its own key's budget (set on ada-agent above): no org or team budget. The budgets and the
    // key's name arrive with their own requests.
    await eventually(() => page.getByTestId('budget-row').allTextContents()).toEqual([
      expect.stringMatching(/^Key ada-agent/),
    ]);
    expect(await page.getByTestId('overview-alerts').count()).toBe(0);
    expect(await page.getByTestId('top-users').count()).toBe(0);
    await page.getByRole('radio', { name: 'By tool' }).waitFor({ state: 'attached' });
    await page.locator('.recharts-bar-rectangle').first().waitFor();
    await expectAccessible(page, 'overview (member)');

    await page.getByRole('link', { name: 'Spend explorer' }).click();
    const total = page.getByTestId('explorer-total-cost');
    await total.waitFor();
    const sums = await ledger(`${utcDay().slice(0, 8)}01`, today, { userId: ids.ada }); // the month to date, as the overview
    expect(await total.getAttribute('data-micros')).toBe(String(sums.costMicros));
    expect(await page.getByTestId('explorer-filter-userId').count()).toBe(0);
    expect(await page.getByTestId('scope-note').textContent()).toContain('Your own usage');
    await expectAccessible(page, 'explorer (member)');

    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByTestId('keys-table').waitFor();
    const names = await page.getByTestId('key-row').locator('td:first-child').allTextContents();
    expect(names).toEqual(['ada-agent']);
  });
});
