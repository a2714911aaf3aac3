import { BaseConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { LedgerService, UsageEvent } from '@tollgate/usage';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectAccessible, parseCsv, signInWithToken } from '../support/console-browser';
import { ConsolePlatform, startConsolePlatform } from '../support/console-platform';

/** The client secret typed in the SSO form: it must never come back, to the page or from the API. */
const SSO_SECRET = 'sso-client-secret-4b1d9e';
/** Keys besides zeta-agent: more than the key picker's 20. */
const BULK_KEYS = 24;

/**
 * What remained of the console's second round (issue 28): single sign-on set from the settings page
 * with a write-only secret, read-only for finance; the call log's key filter searching the API as one types
 * instead of loading every key of the org; the Keys (sorted by the API, before paging), Budgets, Prices,
 * People and Audit tables sorted by a click or a key on a header; the explorer comparing its range, under its
 * filters, with the days just before.
 */
describe('console single sign-on settings, table sorting, period comparison and key search, in a real browser', () => {
  let p: ConsolePlatform;
  let browser: Browser;
  let orgId: string;
  const ids = { alpha: '', ada: '', zeta: '' };
  const tokens = { admin: '', finance: '' };
  const errors: string[] = [];
  const open = async (context: BrowserContext, role: keyof typeof tokens, pagePath?: string) => {
    context.setDefaultTimeout(25_000);
    context.on('page', (pg) => pg.on('pageerror', (e) => errors.push(e.message)));
    return signInWithToken(context, p.adminUrl, tokens[role], pagePath);
  };

  beforeAll(async () => {
    p = await startConsolePlatform();
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Sortable', slug: 'sortable' })).body.id;
    tokens.admin = await p.issueToken({ role: 'ORG_ADMIN', orgId, name: 'sortable admin' });
    tokens.finance = await p.issueToken({ role: 'FINANCE', orgId, name: 'sortable finance' });
    ids.alpha = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'alpha' })).body.id;
    ids.ada = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'ada@sortable.test', name: 'Ada' })).body.id;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.alpha}/members`, { userId: ids.ada })).status).toBe(
      201,
    );
    // More keys than the key picker shows at once: it must search, not list.
    for (let i = 1; i <= BULK_KEYS; i++) {
      const name = `bulk-${String(i).padStart(2, '0')}`;
      expect(
        (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId: ids.alpha, userId: ids.ada, name })).status,
      ).toBe(201);
    }
    ids.zeta = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId: ids.alpha, userId: ids.ada, name: 'zeta-agent' })
    ).body.key.id;
    browser = await p.launchBrowser();
  });

  afterAll(async () => {
    expect(errors).toEqual([]);
    await p?.close();
  });

  it('should let an org admin set up single sign-on with a secret never shown again, and show finance it read-only', async () => {
    const issuer = `${p.adminUrl}/idp-under-test`;
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
    const page = await open(context, 'admin', '/console/settings');
    const sso = page.getByTestId('sso-settings');
    await sso.getByTestId('sso-issuer').waitFor();
    // A refusal of the API shows at its field.
    await sso.getByTestId('sso-issuer').fill('not a url');
    await sso.getByTestId('sso-client-id').fill('tollgate-console');
    await sso.getByTestId('sso-client-secret').fill(SSO_SECRET);
    await sso.getByTestId('sso-save').click();
    await sso.getByText('issuer must be an http:// or https:// URL').waitFor();
    expect((await p.admin('GET', `/v1/orgs/${orgId}/identity-provider`)).status).toBe(404);

    await sso.getByTestId('sso-issuer').fill(issuer);
    const sent = page.waitForRequest((r) => r.method() === 'PUT' && r.url().endsWith('/identity-provider'));
    await sso.getByTestId('sso-save').click();
    expect((await sent).postDataJSON()).toMatchObject({
      issuer,
      clientId: 'tollgate-console',
      clientSecret: SSO_SECRET,
    });
    await sso.getByTestId('sso-done').getByText('Single sign-on is set up.').waitFor();
    const stored = await p.admin('GET', `/v1/orgs/${orgId}/identity-provider`);
    expect(stored.body).toMatchObject({ issuer, clientId: 'tollgate-console', emailClaim: 'email' });
    expect(JSON.stringify(stored.body)).not.toContain(SSO_SECRET);
    // Write-only: the field is empty after the save and after a reload, and the page holds the secret nowhere.
    await eventually(() => sso.getByTestId('sso-client-secret').inputValue()).toBe('');
    // Without ADMIN_PUBLIC_URL (as here) there is no redirect URI to register yet: the form says so.
    await sso.getByTestId('sso-redirect-uris').getByText('ADMIN_PUBLIC_URL').waitFor();
    expect(await page.content()).not.toContain(SSO_SECRET);
    await expectAccessible(page, 'single sign-on settings (org admin, 1024 px)');

    // A change without a new secret keeps the stored one: the request carries none.
    await page.reload();
    await eventually(() => sso.getByTestId('sso-issuer').inputValue()).toBe(issuer);
    expect(await sso.getByTestId('sso-client-secret').inputValue()).toBe('');
    await sso.getByTestId('sso-client-id').fill('tollgate-console-2');
    const kept = page.waitForRequest((r) => r.method() === 'PUT' && r.url().endsWith('/identity-provider'));
    await sso.getByTestId('sso-save').click();
    expect((await kept).postDataJSON()).not.toHaveProperty('clientSecret');
    await sso.getByTestId('sso-done').getByText('Single sign-on saved.').waitFor();
    expect((await p.admin('GET', `/v1/orgs/${orgId}/identity-provider`)).body.clientId).toBe('tollgate-console-2');
    expect(await page.content()).not.toContain(SSO_SECRET);
    await context.close();

    // Finance reads the connection (the API's read level) and has nothing to change it with.
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const fin = await open(phone, 'finance', '/console/settings');
    await fin.getByTestId('sso-read-only').getByText(issuer).waitFor();
    expect(await fin.getByTestId('sso-save').count()).toBe(0);
    expect(await fin.getByTestId('sso-client-secret').count()).toBe(0);
    expect(await fin.getByTestId('sso-remove').count()).toBe(0);
    await expectAccessible(fin, 'single sign-on settings (finance, 390 px)');
    await phone.close();
  }, 180_000);

  it('should search the keys as one types in the call log instead of loading every key of the org', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const asked: URL[] = [];
    context.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname.includes('/keys')) asked.push(url);
    });
    const page = await open(context, 'admin', '/console/calls');
    await page.getByTestId('empty-state').or(page.getByTestId('calls-table')).first().waitFor();
    const picker = page.getByTestId('calls-key');
    await picker.click();
    await page.keyboard.type('zeta', { delay: 40 });
    await page.getByRole('option', { name: /^zeta-agent \(tg_/ }).click();
    await page.waitForURL((u) => u.searchParams.get('keyId') === ids.zeta);
    // One request per pause in typing (never one per keystroke), each for at most 20 keys; the full list never.
    const searches = asked.filter((u) => u.pathname.endsWith('/keys/page'));
    expect(asked.filter((u) => u.pathname.endsWith('/keys'))).toEqual([]);
    expect(searches.map((u) => u.searchParams.get('search') ?? '')).toEqual(['', 'zeta']);
    expect(searches.every((u) => u.searchParams.get('limit') === '20')).toBe(true);

    // A link naming the key shows its name (read by id), not a UUID.
    await page.reload();
    await eventually(() => picker.inputValue()).toMatch(/^zeta-agent \(tg_/);
    await expectAccessible(page, 'call log with the key picker (1440 px)');
    await context.close();

    // Bad input to the search is a 400 naming the field.
    const bad = await p.admin('GET', `/v1/orgs/${orgId}/keys/page?limit=0`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('limit');
  }, 120_000);

  it('should sort the keys, budgets, prices, people and audit tables by a header, by mouse or keyboard', async () => {
    for (const [name, email] of [
      ['Cy', 'cy@sortable.test'],
      ['Bob', 'bob@sortable.test'],
    ])
      expect((await p.admin('POST', `/v1/orgs/${orgId}/users`, { email, name })).status).toBe(201);
    const budget = (scope: string, scopeId: string, period: string, limitMicros: number) =>
      p.admin('PUT', `/v1/orgs/${orgId}/budgets`, { scope, scopeId, period, limitMicros });
    expect((await budget('ORG', orgId, 'MONTH', 50_000_000)).status).toBe(200);
    expect((await budget('TEAM', ids.alpha, 'WEEK', 5_000_000)).status).toBe(200);
    expect((await budget('USER', ids.ada, 'MONTH', 80_000_000)).status).toBe(200);
    for (const [toolPattern, perCallMicros] of [
      ['*', 2_500],
      ['read_*', 900_000],
      ['write', 10],
    ] as const)
      expect((await p.admin('POST', `/v1/orgs/${orgId}/prices`, { toolPattern, perCallMicros })).status).toBe(201);

    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await open(context, 'admin', '/console/keys');
    const header = (table: string, column: string) => page.getByTestId(`${table}-sort-${column}`);
    const sortOf = (table: string, column: string) =>
      header(table, column).locator('xpath=ancestor::th').getAttribute('aria-sort');
    const firstCell = (rows: string, index = 0) => page.getByTestId(rows).first().locator('td').nth(index).innerText();

    // Keys: the API sorts the whole list (the request says how), then pages it.
    await page.getByTestId('keys-table').waitFor();
    const sorted = page.waitForRequest((r) => r.url().includes('/keys/page') && r.url().includes('sort=name%3Aasc'));
    await header('keys', 'name').click();
    await sorted;
    await eventually(() => sortOf('keys', 'name')).toBe('ascending');
    await eventually(() => firstCell('key-row')).toBe('bulk-01');
    // The keyboard does it too: the header is a button.
    await header('keys', 'name').focus();
    await page.keyboard.press('Enter');
    await eventually(() => sortOf('keys', 'name')).toBe('descending');
    await eventually(() => firstCell('key-row')).toBe('zeta-agent');
    expect((await p.admin('GET', `/v1/orgs/${orgId}/keys/page?sort=secret:asc`)).body).toMatchObject({
      field: 'sort',
    });

    // Budgets: a money column sorts largest first on the first click.
    await page.getByRole('link', { name: 'Budgets' }).click();
    await page.getByTestId('budgets-table').waitFor();
    await header('budgets', 'limit').click();
    expect(await sortOf('budgets', 'limit')).toBe('descending');
    await eventually(() =>
      page.getByTestId('budget-limit').evaluateAll((els) => els.map((e) => e.textContent)),
    ).toEqual(['$80.00', '$50.00', '$5.00']);
    await header('budgets', 'limit').click();
    await eventually(() => page.getByTestId('budget-limit').first().textContent()).toBe('$5.00');

    // Prices.
    await page.getByRole('link', { name: 'Prices' }).click();
    await page.getByTestId('prices-table').waitFor();
    await header('prices', 'perCall').click();
    await eventually(() => firstCell('price-row', 1)).toBe('read_*');
    await header('prices', 'tool').click();
    expect(await sortOf('prices', 'tool')).toBe('ascending');
    expect(await sortOf('prices', 'perCall')).toBeNull();
    await eventually(() => firstCell('price-row', 1)).toBe('*');

    // People.
    await page.getByRole('link', { name: 'Teams and people' }).click();
    await page.getByTestId('people-table').waitFor();
    await header('people', 'name').click();
    await eventually(() =>
      page.getByTestId('person-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-email'))),
    ).toEqual(['ada@sortable.test', 'bob@sortable.test', 'cy@sortable.test']);
    await header('people', 'name').click();
    await eventually(() => page.getByTestId('person-row').first().getAttribute('data-email')).toBe('cy@sortable.test');

    // Audit: the changes loaded so far, with a note saying so (the API pages by time).
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByTestId('audit-table').waitFor();
    expect(await page.getByTestId('audit-sort-note').count()).toBe(0);
    await header('audit', 'action').click();
    await page
      .getByTestId('audit-sort-note')
      .getByText(/Sorted by action among the \d+ changes loaded/)
      .waitFor();
    const actions = await page
      .getByTestId('audit-row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
    expect(actions).toEqual([...actions].sort((a, b) => a!.localeCompare(b!)));
    await context.close();

    // At phone width the sortable headers stay accessible.
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const fin = await open(phone, 'finance', '/console/keys');
    await fin.getByTestId('keys-table').waitFor();
    await fin.getByTestId('keys-sort-lastUsedAt').click();
    await eventually(() =>
      fin.getByTestId('keys-sort-lastUsedAt').locator('xpath=ancestor::th').getAttribute('aria-sort'),
    ).toBe('descending');
    await expectAccessible(fin, 'keys sorted (finance, 390 px)');
    await phone.close();
  }, 180_000);

  it('should compare the explorer range with the same number of days before it, under the same filters', async () => {
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const [from, to] = [day(-6), day(0)];
    const prisma = new PrismaService({ db: { url: p.env.vars.DATABASE_URL } } as BaseConfig);
    const otherKey = randomUUID();
    const call = (keyId: string, costMicros: bigint, occurredAt: string): UsageEvent => ({
      id: randomUUID(),
      orgId,
      teamId: ids.alpha,
      userId: ids.ada,
      keyId,
      upstreamId: '00000000-0000-4000-8000-000000000001',
      toolName: 'lookup',
      outcome: 'OK',
      costMicros,
      inputTokens: 0,
      outputTokens: 1,
      latencyMs: 3,
      priceRuleId: null,
      occurredAt: new Date(occurredAt),
    });
    const events = [
      // In the range: zeta-agent spends 3.00 in two calls.
      call(ids.zeta, 1_500_000n, `${day(-1)}T12:00:00Z`),
      call(ids.zeta, 1_500_000n, `${day(-2)}T12:00:00Z`),
      // The 7 days before: 1.00 for zeta-agent, and another key's 4.00 the key filter leaves out.
      call(ids.zeta, 1_000_000n, `${day(-10)}T12:00:00Z`),
      call(otherKey, 4_000_000n, `${day(-9)}T12:00:00Z`),
      // Before both: counted nowhere.
      call(ids.zeta, 9_000_000n, `${day(-20)}T12:00:00Z`),
    ];
    try {
      expect(await new LedgerService(prisma).writeUsageEvents(events)).toBe(events.length);
    } finally {
      await prisma.$disconnect();
    }

    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
    const page = await open(context, 'finance', `/console/explorer?from=${from}&to=${to}&keyId=${ids.zeta}`);
    const previous = page.getByTestId('explorer-previous');
    await previous.getByText(/^\+200\.0 %/).waitFor();
    expect(await previous.getAttribute('data-previous-from')).toBe(day(-13));
    expect(await previous.getAttribute('data-previous-to')).toBe(day(-7));
    expect(await previous.getByTestId('explorer-previous-change').getAttribute('data-micros')).toBe('1000000');
    expect(await previous.textContent()).toContain('$1.00, 1 call; calls +100.0 %');
    await expectAccessible(page, 'explorer with the previous period (finance, 1024 px)');

    // Without the key filter the other key's 4.00 counts: 3.00 against 5.00.
    await page.getByTestId('explorer-clear').click();
    await previous.getByText(/^−40\.0 %/).waitFor();
    await context.close();
  }, 120_000);
  it('should name the budgets’ keys by id and search a new budget’s key, never loading every key of the org', async () => {
    const budget = (scope: string, scopeId: string, period: string, limitMicros: number) =>
      p.admin('PUT', `/v1/orgs/${orgId}/budgets`, { scope, scopeId, period, limitMicros });
    expect((await budget('TEAM', ids.alpha, 'WEEK', 5_000_000)).status).toBe(200);
    expect((await budget('KEY', ids.zeta, 'MONTH', 1_000_000)).status).toBe(200);
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
    const asked: URL[] = [];
    context.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname.includes('/keys')) asked.push(url);
    });
    const page = await open(context, 'admin', '/console/budgets');
    await page
      .getByTestId('budget-line')
      .filter({ hasText: /^Key zeta-agent \(tg_/ })
      .waitFor();
    // The key budget's name came from a lookup of that one id; the full list was never asked for.
    expect(asked.filter((u) => u.pathname.endsWith('/keys'))).toEqual([]);
    expect(asked.map((u) => u.searchParams.get('ids'))).toEqual([ids.zeta]);

    // A new key budget: the key is searched for (live keys only, 20 at most), and its team's lower weekly
    // budget is above it.
    asked.splice(0);
    await page.getByTestId('new-budget').click();
    await page.getByTestId('new-budget-scope').click();
    await page.getByRole('option', { name: 'Key', exact: true }).click();
    await page.getByTestId('new-budget-target').click();
    await page.keyboard.type('bulk-24', { delay: 40 });
    await page.getByRole('option', { name: /^bulk-24 \(tg_/ }).click();
    await page.getByTestId('new-budget-period').click();
    await page.getByRole('option', { name: 'Week' }).click();
    await page.getByTestId('new-budget-limit').fill('6');
    expect(await page.getByRole('dialog').getByTestId('budget-parent-warning').textContent()).toBe(
      'Above its parent: Team alpha allows $5.00 weekly, so calls stop there first.',
    );
    await expectAccessible(page, 'new key budget (1024 px)');
    await page.getByTestId('new-budget-submit').click();
    await page
      .getByTestId('budget-line')
      .filter({ hasText: /^Key bulk-24 \(tg_/ })
      .waitFor();
    const searches = asked.filter((u) => u.pathname.endsWith('/keys/page') && u.searchParams.has('search'));
    expect(searches.map((u) => u.searchParams.get('search'))).toEqual(['bulk-24']);
    expect(
      searches.every((u) => u.searchParams.get('limit') === '20' && u.searchParams.get('inactive') === 'false'),
    ).toBe(true);
    expect(asked.filter((u) => u.pathname.endsWith('/keys'))).toEqual([]);
    const created = ((await p.admin('GET', `/v1/orgs/${orgId}/budgets`)).body as Record<string, unknown>[]).find(
      (b) => b.scope === 'KEY' && b.period === 'WEEK',
    )!;
    const bulk24 = (await p.admin('GET', `/v1/orgs/${orgId}/keys/page?search=bulk-24`)).body.keys[0];
    expect(created).toMatchObject({ scopeId: bulk24.id, limitMicros: 6_000_000 });

    // A revoked key's budget is still named (the lookup includes it); the search for a new one no longer offers it.
    expect((await p.admin('POST', `/v1/orgs/${orgId}/keys/${bulk24.id}/revoke`)).status).toBe(200);
    await page.reload();
    await page
      .getByTestId('budget-line')
      .filter({ hasText: /^Key bulk-24 \(tg_/ })
      .waitFor();
    await page.getByTestId('new-budget').click();
    await page.getByTestId('new-budget-scope').click();
    await page.getByRole('option', { name: 'Key', exact: true }).click();
    await page.getByTestId('new-budget-target').click();
    await page.keyboard.type('bulk-24', { delay: 40 });
    await page.getByText('No key matches').waitFor();
    await context.close();

    // The lookup refuses what is not a list of at most 200 UUIDs, naming ids.
    for (const bad of ['not-a-uuid', `${ids.zeta},`, Array.from({ length: 201 }, () => ids.zeta).join(',')]) {
      const answer = await p.admin('GET', `/v1/orgs/${orgId}/keys/page?ids=${bad}`);
      expect(answer.status, bad.slice(0, 40)).toBe(400);
      expect(answer.body).toMatchObject({ field: 'ids' });
    }
    // Upper-case ids are the same keys.
    expect((await p.admin('GET', `/v1/orgs/${orgId}/keys/page?ids=${ids.zeta.toUpperCase()}`)).body.total).toBe(1);
  }, 120_000);
  it('should name the explorer’s chosen keys by id, search others, and name their teams in the CSV, never loading every key', async () => {
    const today = new Date().toISOString().slice(0, 10);
    expect((await p.admin('PATCH', `/v1/orgs/${orgId}/keys/${ids.zeta}`, { tags: ['project:atlas'] })).status).toBe(
      200,
    );
    const prisma = new PrismaService({ db: { url: p.env.vars.DATABASE_URL } } as BaseConfig);
    try {
      const event: UsageEvent = {
        id: randomUUID(),
        orgId,
        teamId: ids.alpha,
        userId: ids.ada,
        keyId: ids.zeta,
        upstreamId: '00000000-0000-4000-8000-000000000001',
        toolName: 'lookup',
        outcome: 'OK',
        costMicros: 2_000_000n,
        inputTokens: 0,
        outputTokens: 1,
        latencyMs: 3,
        priceRuleId: null,
        occurredAt: new Date(),
      };
      expect(await new LedgerService(prisma).writeUsageEvents([event])).toBe(1);
    } finally {
      await prisma.$disconnect();
    }
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const asked: URL[] = [];
    context.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname.includes('/keys')) asked.push(url);
    });
    const page = await open(
      context,
      'admin',
      `/console/explorer?from=${today}&to=${today}&groupBy=key&keyId=${ids.zeta}`,
    );
    const filters = page.getByRole('group', { name: 'Filters' });
    // The key chosen by the link is named by a lookup of its id.
    await filters.getByText(/^zeta-agent \(tg_/).waitFor();
    await page.getByTestId('explorer-row').first().waitFor();
    // The key tags in reach come with a one-key page.
    await page.getByTestId('explorer-filter-tag').click();
    await page.getByRole('option', { name: 'project:atlas' }).waitFor();
    await page.keyboard.press('Escape');
    // Another key is searched for.
    await page.getByTestId('explorer-filter-keyId').click();
    await page.keyboard.type('bulk-23', { delay: 40 });
    await page.getByRole('option', { name: /^bulk-23 \(tg_/ }).click();
    await page.waitForURL((u) => (u.searchParams.get('keyId') ?? '').split(',').length === 2);
    await page.keyboard.press('Escape');
    await expectAccessible(page, 'explorer with the key search (1440 px)');

    // The CSV names each key line's team: the report's keys looked up by id.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('explorer-download').click(),
    ]);
    const csv = parseCsv(await readFile((await download.path())!, 'utf8'));
    const zetaLine = csv.find((r) => r.includes(ids.zeta))!;
    expect(zetaLine).toContain('alpha');
    expect(zetaLine).toContain(ids.alpha);

    expect(asked.filter((u) => u.pathname.endsWith('/keys'))).toEqual([]);
    const lookups = asked.filter((u) => u.searchParams.has('ids')).map((u) => u.searchParams.get('ids'));
    expect(lookups[0]).toBe(ids.zeta);
    const searches = asked.filter((u) => u.searchParams.has('search'));
    expect(searches.map((u) => u.searchParams.get('search'))).toEqual(['bulk-23']);
    expect(searches.every((u) => u.searchParams.get('limit') === '20')).toBe(true);
    await context.close();
  }, 120_000);
});
