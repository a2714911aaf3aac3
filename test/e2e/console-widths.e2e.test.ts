import { rm } from 'node:fs/promises';
import { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium';
import {
  buildConsole,
  expectAccessible,
  expectNotInVerticalScrollBox,
  newConsoleDir,
  signInWithToken,
} from '../support/console-browser';
import { RunningPlatform, startPlatform } from '../support/platform';

/** What each role opens of the pages this round changed, and what shows once a page has its data. */
const PAGES: Record<string, { path: string; ready: (page: Page) => Promise<void> }> = {
  explorer: {
    path: '/console/explorer',
    ready: (page) => page.getByTestId('explorer-table').or(page.getByText('No calls in this range')).waitFor(),
  },
  budgets: { path: '/console/budgets', ready: (page) => page.getByTestId('budgets-table').waitFor() },
  prices: { path: '/console/prices', ready: (page) => page.getByTestId('prices-table').waitFor() },
  audit: { path: '/console/audit', ready: (page) => page.getByTestId('audit-table').waitFor() },
  keys: { path: '/console/keys', ready: (page) => page.getByTestId('keys-table').waitFor() },
};
const ROLES: Record<string, string[]> = {
  admin: ['explorer', 'budgets', 'prices', 'audit', 'keys'],
  finance: ['explorer', 'budgets', 'audit'],
  teamAdmin: ['explorer', 'budgets', 'keys'],
  member: ['explorer', 'keys'],
};
const WIDTHS = [390, 1024, 1440];

describe('console pages per role and width', () => {
  let p: RunningPlatform;
  let browser: Browser;
  let consoleDir: string;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    consoleDir = await newConsoleDir('console-widths');
    const built = buildConsole(consoleDir);
    p = await startPlatform({ ADMIN_CONSOLE_DIR: consoleDir });
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Widthwise', slug: 'widthwise', currency: 'EUR' })).body
      .id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'platform' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'wu@widthwise.test', name: 'Wu' })).body
      .id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
      teamId,
      userId,
      name: 'wu-agent',
      tags: ['env:prod'],
    });
    expect(key.status).toBe(201);
    const budget = (body: Record<string, unknown>) => p.admin('PUT', `/v1/orgs/${orgId}/budgets`, body);
    expect((await budget({ scope: 'ORG', scopeId: orgId, period: 'MONTH', limitMicros: 100_000_000 })).status).toBe(
      200,
    );
    expect(
      (await budget({ scope: 'TEAM', scopeId: teamId, period: 'MONTH', limitMicros: 150_000_000, mode: 'SOFT' }))
        .status,
    ).toBe(200);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          toolPattern: '*',
          perCallMicros: 2_500,
          perOutputTokenMicros: 3,
        })
      ).status,
    ).toBe(201);
    const issue = async (body: Record<string, unknown>) =>
      (await p.admin('POST', '/v1/admin-tokens', body)).body.secret as string;
    tokens.admin = await issue({ role: 'ORG_ADMIN', orgId, name: 'widths admin' });
    tokens.finance = await issue({ role: 'FINANCE', orgId, name: 'widths finance' });
    tokens.teamAdmin = await issue({ role: 'TEAM_ADMIN', orgId, teamId, name: 'widths lead' });
    tokens.member = await issue({ role: 'MEMBER', orgId, teamId, userId, name: 'widths member' });
    await built;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await p?.close();
    if (consoleDir) await rm(consoleDir, { recursive: true, force: true });
  });

  for (const [role, pages] of Object.entries(ROLES)) {
    it(`should show ${role} ${pages.join(', ')} at ${WIDTHS.join(', ')} px with no serious axe finding`, async () => {
      for (const width of WIDTHS) {
        const context = await browser.newContext({ viewport: { width, height: 900 } });
        const page = await signInWithToken(context, p.adminUrl, tokens[role]);
        for (const name of pages) {
          await page.goto(`${p.adminUrl}${PAGES[name].path}`);
          await PAGES[name].ready(page);
          await expectAccessible(page, `${role} ${name} at ${width} px`);
          if (name === 'explorer' && (await page.getByTestId('explorer-table-total').count()) > 0)
            await expectNotInVerticalScrollBox(page.getByTestId('explorer-table-total'));
        }
        await context.close();
      }
    }, 180_000);
  }
});
