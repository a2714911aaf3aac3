import { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, expectNotInVerticalScrollBox, signInWithToken } from '../support/console-browser';
import { ConsolePlatform, startConsolePlatform } from '../support/console-platform';

/** What each role opens of the pages this round changed, and what shows once a page has its data. */
const PAGES: Record<string, { path: string; ready: (page: Page) => Promise<void> }> = {
  explorer: {
    path: '/console/explorer',
    ready: (page) => page.getByTestId('explorer-table').or(page.getByText('No calls in this range')).waitFor(),
  },
  budgets: {
    path: '/console/budgets',
    // A member without a budget of their own sees the empty state.
    ready: (page) => page.getByTestId('budgets-table').or(page.getByTestId('empty-state')).first().waitFor(),
  },
  prices: { path: '/console/prices', ready: (page) => page.getByTestId('prices-table').waitFor() },
  audit: { path: '/console/audit', ready: (page) => page.getByTestId('audit-table').waitFor() },
  keys: { path: '/console/keys', ready: (page) => page.getByTestId('keys-table').waitFor() },
};
const ROLES = ['admin', 'finance', 'teamAdmin', 'member'];
const WIDTHS = [390, 1024, 1440];

/** Any other page: shown in the main landmark, with no loading state left (aria-busy). */
async function settled(page: Page): Promise<void> {
  await page.locator('main').waitFor();
  await expect.poll(() => page.locator('[aria-busy="true"]').count(), { timeout: 20_000 }).toBe(0);
}

/**
 * Opens `path` as the console's own navigation does (history and popstate, no reload) and waits
 * until the page shows its data: its navigation link is the current page, then its own ready state.
 */
async function openInApp(page: Page, path: string): Promise<void> {
  await page.evaluate(
    `history.pushState(null, '', ${JSON.stringify(path)}); dispatchEvent(new PopStateEvent('popstate'))`,
  );
  // Attached, not visible: at 390 px the navigation is folded away.
  await page.locator(`#console-navigation a[href="${path}"][aria-current="page"]`).waitFor({ state: 'attached' });
  const known = Object.values(PAGES).find((pg) => pg.path === path);
  await (known ? known.ready(page) : settled(page));
}

/**
 * Sets the window's width (900 px high) and waits two frames: the resize's layout, and what the page
 * renders again for it (a matchMedia hook's state), are done before the page is read.
 */
async function resizeTo(page: Page, width: number): Promise<void> {
  if (page.viewportSize()?.width === width) return;
  await page.setViewportSize({ width, height: 900 });
  await page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))');
}

/** Every page the navigation offers the signed-in role, by path (`/console/…`). */
async function navigationPaths(page: Page): Promise<string[]> {
  const links = await page.locator('#console-navigation a[href^="/console"]').all();
  return Promise.all(links.map(async (l) => (await l.getAttribute('href')) as string));
}

describe('console pages per role and width', () => {
  let p: ConsolePlatform;
  let browser: Browser;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    p = await startConsolePlatform();
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
    tokens.admin = await p.issueToken({ role: 'ORG_ADMIN', orgId, name: 'widths admin' });
    tokens.finance = await p.issueToken({ role: 'FINANCE', orgId, name: 'widths finance' });
    tokens.teamAdmin = await p.issueToken({ role: 'TEAM_ADMIN', orgId, teamId, name: 'widths lead' });
    tokens.member = await p.issueToken({ role: 'MEMBER', orgId, teamId, userId, name: 'widths member' });
    browser = await p.launchBrowser();
  });

  afterAll(async () => {
    await p?.close();
  });

  // Every page each role's navigation offers, at each width (issue 28's proof: per role, per width, axe).
  // One signed-in page per role, each page opened once as the console's navigation opens it (no reload
  // of the app, so axe is injected once) and checked at each width by resizing the window, as a person
  // turning a phone or widening a window would: the layout follows the width (CSS media queries and
  // Mantine's matchMedia hooks), not how the page was reached, and a page's data is loaded once
  // instead of once per width. The widths alternate in direction so a page starts at the width the
  // last one ended at.
  for (const role of ROLES) {
    it(`should show every page of ${role} at ${WIDTHS.join(', ')} px with no serious axe finding`, async () => {
      const context = await browser.newContext({ viewport: { width: WIDTHS[0], height: 900 } });
      const page = await signInWithToken(context, p.adminUrl, tokens[role]);
      const paths = await navigationPaths(page);
      expect(paths.length, role).toBeGreaterThanOrEqual(7);
      let widths = WIDTHS;
      for (const path of paths) {
        await openInApp(page, path);
        for (const width of widths) {
          await resizeTo(page, width);
          await expectAccessible(page, `${role} ${path} at ${width} px`);
          if (path === PAGES.explorer.path && (await page.getByTestId('explorer-table-total').count()) > 0)
            await expectNotInVerticalScrollBox(page.getByTestId('explorer-table-total'));
        }
        widths = [...widths].reverse();
      }
      await context.close();
    }, 420_000);
  }

  // Dark mode follows the system setting (prefers-color-scheme); its colours pass axe as the light ones do.
  it('should follow a dark system setting on every page of the org admin, with no serious axe finding', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'dark' });
    const page = await signInWithToken(context, p.adminUrl, tokens.admin);
    expect(await page.locator('html').getAttribute('data-mantine-color-scheme')).toBe('dark');
    // The page itself is dark, not only the attribute: its background is darker than its text.
    const luminance = (css: string) => {
      const [r, g, b] = (css.match(/\d+(\.\d+)?/g) ?? []).map(Number);
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    // A string: the test's types have no DOM (getComputedStyle).
    const colours = (await page.evaluate(
      '(() => { const s = getComputedStyle(document.body); return { background: s.backgroundColor, text: s.color }; })()',
    )) as { background: string; text: string };
    expect(luminance(colours.background)).toBeLessThan(luminance(colours.text));
    for (const path of await navigationPaths(page)) {
      await openInApp(page, path);
      await expectAccessible(page, `admin ${path} in dark mode`);
    }
    await context.close();
  }, 420_000);
});
