import { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectAccessible, signInWithToken, saveScreenshot } from '../support/console-browser';
import { ConsolePlatform, startConsolePlatform } from '../support/console-platform';

/**
 * Running an organisation from the console (issue 28): a new org's admin creates a team, adds a
 * person, makes them the team's admin and finance, offboards them after seeing what goes, issues
 * and revokes an admin token and moves the org's time zone; finance reads and changes nothing.
 */
describe('console teams, people and organisation settings, in a real browser', () => {
  let p: ConsolePlatform;
  let browser: Browser;
  let orgId: string;
  // A step that cannot happen fails on its own line (with the page's errors), not as a test time-out.
  const errors: string[] = [];
  const open = async (context: BrowserContext, role: 'admin' | 'finance', pagePath?: string) => {
    context.setDefaultTimeout(25_000);
    context.on('page', (pg) => pg.on('pageerror', (e) => errors.push(e.message)));
    return signInWithToken(context, p.adminUrl, tokens[role], pagePath);
  };
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    p = await startConsolePlatform();
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Northwind', slug: 'northwind-people' })).body.id;
    tokens.admin = await p.issueToken({ role: 'ORG_ADMIN', orgId, name: 'northwind admin' });
    tokens.finance = await p.issueToken({ role: 'FINANCE', orgId, name: 'northwind finance' });
    browser = await p.launchBrowser();
  });

  afterAll(async () => {
    expect(errors).toEqual([]);
    await p?.close();
  });

  it('should let an org admin create a team, add a person as its admin, set an org role, then offboard them after a preview', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await open(context, 'admin', '/console/people');
    await page.getByTestId('new-team').click();
    await page.getByTestId('team-name').fill('platform');
    await page.getByTestId('team-submit').click();
    await page.getByTestId('team-row').filter({ hasText: 'platform' }).waitFor();

    await page.getByTestId('new-person').click();
    await page.getByTestId('person-email').fill('sam@northwind.test');
    await page.getByTestId('person-name').fill('Sam Lee');
    await page.getByTestId('person-submit').click();
    const sam = page.locator('[data-testid=person-row][data-email="sam@northwind.test"]');
    await sam.waitFor();

    await page.getByRole('button', { name: 'Add member to platform' }).click();
    await page.getByTestId('member-person').click();
    await page.getByRole('option', { name: 'Sam Lee (sam@northwind.test)' }).click();
    await page.getByTestId('member-team-admin').check();
    await page.getByTestId('member-submit').click();
    await page.getByTestId('people-done').getByText('Sam Lee joined platform as its admin.').waitFor();
    const teamId = ((await p.admin('GET', `/v1/orgs/${orgId}/teams`)).body as { id: string }[])[0].id;
    const samId = ((await p.admin('GET', `/v1/orgs/${orgId}/users`)).body as { id: string }[])[0].id;
    expect((await p.admin('GET', `/v1/orgs/${orgId}/teams/${teamId}/members`)).body).toMatchObject([
      { userId: samId, isTeamAdmin: true },
    ]);

    await sam.getByTestId('org-role').selectOption({ label: 'Finance' });
    await page.getByTestId('people-done').getByText('Sam Lee is now finance.').waitFor();
    expect((await p.admin('GET', `/v1/orgs/${orgId}/users/${samId}/org-role`)).body.role).toBe('FINANCE');
    await expectAccessible(page, 'teams and people');
    await saveScreenshot(page, 'people.png', { fullPage: true });

    // A key of Sam's: the offboarding preview names it before anything is revoked.
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId: samId, name: 'sam-laptop' });
    await page.reload();
    await sam.getByRole('button', { name: 'Offboard Sam Lee' }).click();
    const preview = page.getByTestId('offboard-preview');
    await preview.getByText('1 active key(s): sam-laptop').waitFor();
    expect(await preview.textContent()).toContain('membership of platform');
    expect((await p.admin('GET', `/v1/orgs/${orgId}/keys/${key.body.key.id}`)).body.revokedAt).toBeNull();
    await expectAccessible(page, 'offboarding preview');
    await page.getByTestId('confirm-offboard').click();
    await page
      .getByTestId('people-done')
      .getByText(/Sam Lee is offboarded: 1 key\(s\)/)
      .waitFor();
    expect((await p.admin('GET', `/v1/orgs/${orgId}/keys/${key.body.key.id}`)).body.revokedAt).not.toBeNull();
    await eventually(() => sam.getByTestId('person-status').textContent()).toContain('Offboarded');
    await context.close();
  }, 180_000);

  it('should issue and revoke an admin token, and move the org to another time zone', async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
    const page = await open(context, 'admin', '/console/settings');
    await page.getByTestId('issue-admin-token').click();
    await page.getByTestId('admin-token-name').fill('ci-pipeline');
    await page.getByTestId('admin-token-submit').click();
    const secret = (await page.getByTestId('admin-token-secret').textContent())!.trim();
    // The secret works at once, as a finance token.
    const me = await fetch(`${p.adminUrl}/v1/auth/session`, { headers: { authorization: `Bearer ${secret}` } });
    expect(((await me.json()) as { role: string }).role).toBe('FINANCE');
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.locator('[data-testid=admin-token-row][data-name=ci-pipeline]');
    await row.getByRole('button', { name: 'Revoke the token ci-pipeline' }).click();
    await page.getByTestId('confirm-revoke-token').click();
    await row.waitFor({ state: 'detached' });
    const after = await fetch(`${p.adminUrl}/v1/auth/session`, { headers: { authorization: `Bearer ${secret}` } });
    expect(after.status).toBe(401);

    await page.getByTestId('org-time-zone').click();
    await page.getByTestId('org-time-zone').fill('Asia/Tok');
    await page.getByRole('option', { name: 'Asia/Tokyo' }).click();
    // A new time zone reloads the console (every date on it moves): wait for that reload, not only
    // for the API, before reading the page again.
    const reloaded = page.waitForEvent('load');
    await page.getByTestId('org-save').click();
    await reloaded;
    await expect
      .poll(async () => (await p.admin('GET', `/v1/orgs/${orgId}`)).body.timeZone, { timeout: 20_000 })
      .toBe('Asia/Tokyo');
    await eventually(() => page.getByTestId('org-time-zone').inputValue()).toBe('Asia/Tokyo');
    await expectAccessible(page, 'organisation settings');
    await context.close();
  }, 180_000);

  it('should show finance the people and the settings without a single control that changes them', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await open(context, 'finance', '/console/people');
    await page.getByTestId('people-table').waitFor();
    expect(await page.getByTestId('new-team').count()).toBe(0);
    expect(await page.getByTestId('new-person').count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Offboard/ }).count()).toBe(0);
    await expectAccessible(page, 'teams and people (finance, 390 px)');
    await saveScreenshot(page, 'people-phone.png', { fullPage: true });
    await page.goto(`${p.adminUrl}/console/settings`);
    await page.getByTestId('org-name').waitFor();
    expect(await page.getByTestId('org-save').count()).toBe(0);
    expect(await page.getByTestId('issue-admin-token').count()).toBe(0);
    await expectAccessible(page, 'organisation settings (finance, 390 px)');
    await context.close();
  });
});
