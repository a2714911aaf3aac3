import { PrismaClient } from '@prisma/client';
import { PrismaPg } from '@prisma/adapter-pg';
import { Browser, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { eventually, expectAccessible, parseCsv, signInWithToken, saveScreenshot } from '../support/console-browser';
import { ConsolePlatform, startConsolePlatform } from '../support/console-platform';

const SQUADS = 55;

describe('console audit log in a real browser', () => {
  let p: ConsolePlatform;
  let db: PrismaClient;
  let browser: Browser;
  let orgId: string;
  let oldEventId: string;
  let total: number;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    p = await startConsolePlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });

    // New York: 03:30 UTC on 15 January is still 14 January there.
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Ledgerly', slug: 'ledgerly', timeZone: 'America/New_York' }))
      .body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'agents' })).body.id;
    const grace = (
      await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'grace@ledgerly.test', name: 'Grace Hopper' })
    ).body.id;
    const ada = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'ada@ledgerly.test', name: 'Ada Lovelace' }))
      .body.id;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId: ada })).status).toBe(201);
    tokens.grace = await p.issueToken({ role: 'ORG_ADMIN', orgId, userId: grace, name: 'grace laptop' });
    tokens.finance = await p.issueToken({ role: 'FINANCE', orgId, name: 'ledgerly finance' });

    // Grace's first key, long ago; then a busy day of changes buries it under more than a page.
    const legacy = await p.admin(
      'POST',
      `/v1/orgs/${orgId}/keys`,
      { teamId, userId: ada, name: 'legacy-agent', tags: ['project:atlas'] },
      tokens.grace,
    );
    expect(legacy.status).toBe(201);
    const old = await db.auditEvent.findFirstOrThrow({ where: { orgId, targetId: legacy.body.key.id } });
    oldEventId = old.id;
    await db.auditEvent.update({ where: { id: old.id }, data: { createdAt: new Date('2026-01-15T03:30:00Z') } });
    for (let i = 1; i <= SQUADS; i++) {
      const res = await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: `squad-${i}` }, tokens.grace);
      expect(res.status).toBe(201);
    }
    expect((await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId: ada, name: 'fresh-agent' })).status).toBe(
      201,
    );
    // A budget set, then raised; a team renamed: the change log's before and after.
    const budget = { scope: 'TEAM', scopeId: teamId, period: 'MONTH', mode: 'SOFT' };
    expect((await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, { ...budget, limitMicros: 10_000_000 })).status).toBe(
      200,
    );
    expect((await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, { ...budget, limitMicros: 25_000_000 })).status).toBe(
      200,
    );
    expect((await p.admin('PATCH', `/v1/orgs/${orgId}/teams/${teamId}`, { name: 'agents-eu' })).status).toBe(200);
    total = await db.auditEvent.count({ where: { orgId } });
    expect(total).toBeGreaterThan(50);
    browser = await p.launchBrowser();
  });

  afterAll(async () => {
    await db?.$disconnect();
    await p?.close();
  });

  it('should page through every change with Load more, the oldest one last', async () => {
    const page = await p.openConsole(tokens.finance, '/console/audit');
    const rows = page.getByTestId('audit-row');
    await page.getByTestId('audit-table').waitFor();
    expect(await rows.count()).toBe(50);
    expect(await page.locator(`[data-id="${oldEventId}"]`).count()).toBe(0);
    await page.getByTestId('audit-load-more').click();
    await page.getByTestId('audit-end').waitFor();
    expect(await rows.count()).toBe(total);
    expect(await rows.last().getAttribute('data-id')).toBe(oldEventId);
    expect(await page.getByTestId('audit-summary').textContent()).toContain(`${total} changes shown`);
  });

  it('should drop what an older Load more brings once the filters or the first page changed', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await signInWithToken(context, p.adminUrl, tokens.finance, '/console/audit');
    const rows = page.getByTestId('audit-row');
    await page.getByTestId('audit-table').waitFor();
    // Next-page requests wait here until the test lets them go.
    let hold: (route: Route) => void = () => undefined;
    await page.route(/\/audit\/search\?.*cursor=/, (route) => hold(route));
    const heldNextPage = () => new Promise<Route>((resolve) => (hold = resolve));
    /** Lets a held request answer, then waits for the page to have handled it (two frames after its body). */
    const release = async (answer: Promise<void>) => {
      const finished = page.waitForEvent('requestfinished', (r) => r.url().includes('cursor='));
      await answer;
      await finished;
      await page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))');
    };
    const pickKeyCategory = async () => {
      await page.getByTestId('audit-action').click();
      await page.getByRole('option', { name: 'key.* (every key change)' }).click();
      await eventually(() => rows.count()).toBe(2);
    };

    // A next page that fails after the filters changed: its error is not this query's.
    let held = heldNextPage();
    await page.getByTestId('audit-load-more').click();
    const failing = await held;
    await pickKeyCategory();
    await release(failing.fulfill({ status: 500, contentType: 'application/json', body: '{"message":"boom"}' }));
    expect(await page.getByTestId('error-state').count()).toBe(0);
    expect(await rows.count()).toBe(2);

    // A next page that lands after the first page was loaded again (filters changed and back): not appended.
    await page.getByTestId('audit-clear').click();
    await eventually(() => rows.count()).toBe(50);
    held = heldNextPage();
    await page.getByTestId('audit-load-more').click();
    const late = await held;
    await pickKeyCategory();
    await page.getByTestId('audit-clear').click();
    await eventually(() => rows.count()).toBe(50);
    await release(late.continue());
    expect(await rows.count()).toBe(50);
    expect(await page.getByTestId('audit-load-more').isEnabled()).toBe(true);

    await page.unroute(/\/audit\/search\?.*cursor=/);
    await page.getByTestId('audit-load-more').click();
    await page.getByTestId('audit-end').waitFor();
    expect(await rows.count()).toBe(total);
    await context.close();
  });

  it('should find an old change by category, person and the org’s calendar days, and show its details', async () => {
    const page = await p.openConsole(tokens.finance, '/console/audit');
    const rows = page.getByTestId('audit-row');
    await page.getByTestId('audit-table').waitFor();

    await page.getByTestId('audit-action').click();
    await page.getByRole('option', { name: 'key.* (every key change)' }).click();
    await eventually(() => rows.count()).toBe(2);
    await page.getByTestId('audit-actor').click();
    await page.getByRole('option', { name: 'Grace Hopper <grace@ledgerly.test>' }).click();
    await eventually(() => rows.count()).toBe(1);
    expect(await rows.getAttribute('data-id')).toBe(oldEventId);

    // The org's 15 January (New York) has nothing: the change was on its 14th, though the 15th in UTC.
    await page.getByTestId('audit-from').fill('2026-01-15');
    await page.getByTestId('audit-to').fill('2026-01-15');
    await page.getByText('No change matches').waitFor();
    // The end first: a range from the 14th to the 15th would load (and show the same change) on the way,
    // and its answer could be read while the 14th's own request was still loading.
    await page.getByTestId('audit-to').fill('2026-01-14');
    await page.getByTestId('audit-from').fill('2026-01-14');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    expect(await rows.getAttribute('data-id')).toBe(oldEventId);
    expect(await rows.locator('td').first().textContent()).toContain('Jan 14, 2026');

    await page.getByTestId('audit-details-toggle').click();
    const details = page.getByTestId('audit-details');
    expect(await details.textContent()).toContain('"name": "legacy-agent"');
    expect(await details.textContent()).toContain('project:atlas');
    await expectAccessible(page, 'audit log');
    await saveScreenshot(page, 'audit-log.png', { fullPage: true });

    // A range that ends before it starts asks for a fix instead of asking the API.
    await page.getByTestId('audit-from').fill('2026-01-20');
    await page.getByText('The range ends before it starts').waitFor();
    await page.getByTestId('audit-from').fill('');
    await page.getByTestId('audit-to').fill('');
    await eventually(() => rows.count()).toBe(1);

    await page.getByTestId('audit-clear').click();
    await eventually(() => rows.count()).toBe(50);
  });

  it('should read as a change log: targets by name, before and after in the org currency, presets, CSV and JSON export', async () => {
    const page = await p.openConsole(tokens.finance, '/console/audit');
    const rows = page.getByTestId('audit-row');
    await page.getByTestId('audit-table').waitFor();
    await page.getByTestId('audit-action').click();
    await page.getByRole('option', { name: 'budget.* (every budget change)' }).click();
    await eventually(() => rows.count()).toBe(2);

    // The raise: named after its scope (the team as it is called now), the limit before and after, in dollars.
    const raised = rows.first();
    expect(await raised.getByTestId('audit-target-name').textContent()).toBe('team agents-eu, monthly');
    expect(await raised.textContent()).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/); // no UUID shown
    const limit = raised.locator('[data-testid="audit-change"][data-field="limitMicros"]');
    expect(await limit.getByTestId('audit-before').textContent()).toBe('$10.00');
    expect(await limit.getByTestId('audit-after').textContent()).toBe('$25.00');
    expect(await raised.getByTestId('audit-change').count()).toBe(1); // only what changed
    // The creation: every field new, no before.
    const created = rows.nth(1).locator('[data-testid="audit-change"][data-field="limitMicros"]');
    expect(await created.getByTestId('audit-before').count()).toBe(0);
    expect(await created.getByTestId('audit-after').textContent()).toBe('$10.00');

    // The CSV: one line per changed field, money exact with its currency, the target by id and name.
    const [csvFile] = await Promise.all([page.waitForEvent('download'), page.getByTestId('audit-export-csv').click()]);
    const [header, ...lines] = parseCsv(await readFile((await csvFile.path())!, 'utf8'));
    const col = (name: string) => header.indexOf(name);
    expect(header).toContain('When (America/New_York)');
    const raise = lines.find((l) => l[col('Action')] === 'budget.updated' && l[col('Field')] === 'limitMicros')!;
    expect([raise[col('Before')], raise[col('After')], raise[col('Currency')]]).toEqual(['10.00', '25.00', 'USD']);
    expect(raise[col('Target')]).toBe('team agents-eu, monthly');
    expect(new Set(lines.map((l) => l[col('Event id')])).size).toBe(2);

    // A renamed team: its old and new name; the JSON export holds every change of the trail.
    await page.getByTestId('audit-clear').click();
    await page.getByTestId('audit-action').click();
    await page.getByRole('option', { name: 'team.updated', exact: true }).click();
    await eventually(() => rows.count()).toBe(1);
    expect(await rows.getByTestId('audit-before').textContent()).toBe('agents');
    expect(await rows.getByTestId('audit-after').textContent()).toBe('agents-eu');
    await page.getByTestId('audit-clear').click();
    const [jsonFile] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('audit-export-json').click(),
    ]);
    const exported = JSON.parse(await readFile((await jsonFile.path())!, 'utf8'));
    expect(exported.org).toMatchObject({ timeZone: 'America/New_York', currency: 'USD' });
    expect(exported.events).toHaveLength(total);

    // Presets: "Today" is the org's today; the January change is not in it.
    await page.getByTestId('audit-preset').click();
    await page.getByRole('option', { name: 'Today', exact: true }).click();
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York' }).format(new Date());
    expect(await page.getByTestId('audit-from').inputValue()).toBe(today);
    expect(await page.getByTestId('audit-to').inputValue()).toBe(today);
    await eventually(() => page.locator(`[data-id="${oldEventId}"]`).count()).toBe(0);
    await expectAccessible(page, 'audit change log');

    // On a phone the log stays usable and accessible.
    const small = await p.openConsole(tokens.finance, '/console/audit', { width: 390, height: 844 });
    await small.getByTestId('audit-table').waitFor();
    await expectAccessible(small, 'audit log at 390 px');
    await saveScreenshot(small, 'audit-log-phone.png');
  }, 150_000); // two exports and a phone-width load: on a busy two-core machine it outlasts the default minute
});
