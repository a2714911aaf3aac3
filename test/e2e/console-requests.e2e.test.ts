import { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInWithToken } from '../support/console-browser';
import { ConsolePlatform, startConsolePlatform } from '../support/console-platform';

/** Every page an org admin has, as the navigation names it. */
const PAGES = [
  'overview',
  'explorer',
  'calls',
  'trail',
  'keys',
  'policies',
  'audit',
  'alerts',
  'connections',
  'budgets',
  'upstreams',
  'prices',
  'people',
  'settings',
];

/**
 * The admin API GETs a page sends, counted by URL (path and query) until the page is quiet: none
 * in flight and none started for QUIET_MS. A debounce or a late effect that asks again fires within
 * that window, because the page's clock is run 2 s ahead each round (Playwright's fake clock).
 */
const QUIET_MS = 600;

/**
 * What the console itself asks for, before identical GETs in flight share one request (sharedFetch in
 * admin-client.ts): each GET sends a `tollgate:api-get` event with its URL, collected here. The
 * network alone would hide a page that asks twice at once.
 */
const COLLECT_ASKED = `window.__tgAsked = []; addEventListener('tollgate:api-get', (e) => window.__tgAsked.push(e.detail));`;
const TAKE_ASKED = `(window.__tgAsked ?? []).splice(0)`;

/**
 * Asked twice on purpose, and sent once: the shell's attention badge reads the latest alerts on each
 * page change and the Overview shows them; sharedFetch makes it one request.
 */
const SHARED_ON_PURPOSE: Record<string, Record<string, number>> = {
  overview: { '/alerts?limit=100': 2 },
};

/** Each URL asked more than once, with its count; the org's path left out so the names read. */
function repeatedOf(urls: string[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const u of urls) {
    const short = u.replace(/^\/v1\/orgs\/[0-9a-f-]{36}/, '');
    counts.set(short, (counts.get(short) ?? 0) + 1);
  }
  return Object.fromEntries([...counts].filter(([, n]) => n > 1));
}

function watchRequests(page: Page, adminUrl: string) {
  const sent: string[] = [];
  let inFlight = 0;
  let lastActivity = Date.now();
  page.on('request', (r) => {
    if (!r.url().startsWith(`${adminUrl}/v1/`)) return;
    inFlight++;
    lastActivity = Date.now();
    if (r.method() === 'GET') sent.push(r.url().slice(adminUrl.length));
  });
  const done = (r: { url(): string }) => {
    if (!r.url().startsWith(`${adminUrl}/v1/`)) return;
    inFlight--;
    lastActivity = Date.now();
  };
  page.on('requestfinished', done);
  page.on('requestfailed', done);
  return {
    reset: async () => {
      sent.splice(0);
      await page.evaluate(TAKE_ASKED);
    },
    /** Each URL sent over the network more than once since the last reset, with its count. */
    repeated: () => repeatedOf(sent),
    /** Each URL the console asked for more than once since the last reset (shared requests counted apart). */
    askedTwice: async () =>
      repeatedOf(((await page.evaluate(TAKE_ASKED)) as string[]).map((u) => new URL(u).pathname + new URL(u).search)),
    sent: () => [...sent],
    /** Waits until the page is quiet, running its timers ahead so a pending debounce fires. */
    async settle(): Promise<void> {
      for (let round = 0; round < 3; round++) {
        const deadline = Date.now() + 30_000;
        // Proving that nothing more is sent needs a quiet window: there is no event for "no request".
        while (
          inFlight > 0 ||
          Date.now() - lastActivity < QUIET_MS ||
          (await page.locator('[aria-busy="true"]').count())
        ) {
          if (Date.now() > deadline) throw new Error(`the page did not settle: ${inFlight} requests in flight`);
          await new Promise((r) => setTimeout(r, 50));
        }
        await page.clock.runFor(2_000);
      }
    },
  };
}

/**
 * Opening a page asks the API for each thing it shows once: no effect that sets new state after
 * mount (a debounced filter, a URL written back, a choice list) and so asks again, blanking what was
 * shown (what made the trail page flaky in CI, e1d1631).
 */
describe('console pages ask for their data once', () => {
  let p: ConsolePlatform;
  let browser: Browser;
  let token: string;
  let keyId: string;

  beforeAll(async () => {
    p = await startConsolePlatform();
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Once', slug: 'once-only' })).body.id as string;
    const teams = [
      (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'platform' })).body.id as string,
      (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'research' })).body.id as string,
    ];
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'ona@once.test', name: 'Ona' })).body
      .id as string;
    for (const teamId of teams) await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId: teams[0], userId, name: 'ona-agent' });
    expect(key.status).toBe(201);
    keyId = key.body.key.id;
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'ORG',
          scopeId: orgId,
          period: 'MONTH',
          limitMicros: 9_000_000,
        })
      ).status,
    ).toBe(200);
    expect((await p.admin('POST', `/v1/orgs/${orgId}/prices`, { toolPattern: '*', perCallMicros: 2_500 })).status).toBe(
      201,
    );
    token = await p.issueToken({ role: 'ORG_ADMIN', orgId, name: 'once admin' });
    browser = await p.launchBrowser();
  });

  afterAll(async () => {
    await p?.close();
  });

  it('should send each API request once when each page is opened from the navigation', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.clock.install();
    await context.addInitScript(COLLECT_ASKED);
    const page = await signInWithToken(context, p.adminUrl, token);
    const requests = watchRequests(page, p.adminUrl);
    await requests.settle();
    const repeats: Record<string, Record<string, number>> = {};
    const asked: Record<string, Record<string, number>> = {};
    const sent: Record<string, string[]> = {};
    // The overview is shown after sign-in: open another page first, so it is opened like the rest.
    for (const name of [...PAGES.slice(1), PAGES[0]]) {
      await requests.reset();
      await page.locator(`#console-navigation a[href="/console/${name === 'overview' ? '' : name}"]`).click();
      await requests.settle();
      sent[name] = requests.sent();
      repeats[name] = requests.repeated();
      asked[name] = await requests.askedTwice();
    }
    // Every page asked for something (the count is real), and nothing twice: not over the network,
    // and not in the page either (but for what the shell and a page share on purpose).
    for (const name of PAGES) expect(sent[name].length, name).toBeGreaterThan(0);
    expect(repeats).toEqual(Object.fromEntries(PAGES.map((n) => [n, {}])));
    expect(asked).toEqual(Object.fromEntries(PAGES.map((n) => [n, SHARED_ON_PURPOSE[n] ?? {}])));
    await context.close();
  }, 180_000);

  it('should send each API request once when a page is opened by a link with filters in its URL', async () => {
    const links = [
      `/console/calls?keyId=${keyId}&tool=lookup&outcome=OK`,
      `/console/trail?sessionId=s-1&keyId=${keyId}`,
      '/console/explorer?groupBy=key,day',
      '/console/audit',
    ];
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.clock.install();
    await context.addInitScript(COLLECT_ASKED);
    const page = await signInWithToken(context, p.adminUrl, token);
    const repeats: Record<string, Record<string, number>> = {};
    const asked: Record<string, Record<string, number>> = {};
    for (const link of links) {
      const requests = watchRequests(page, p.adminUrl);
      await page.goto(`${p.adminUrl}${link}`);
      await requests.settle();
      expect(requests.sent().length, link).toBeGreaterThan(0);
      repeats[link] = requests.repeated();
      asked[link] = await requests.askedTwice();
      page.removeAllListeners('request');
      page.removeAllListeners('requestfinished');
      page.removeAllListeners('requestfailed');
    }
    expect(repeats).toEqual(Object.fromEntries(links.map((l) => [l, {}])));
    expect(asked).toEqual(Object.fromEntries(links.map((l) => [l, {}])));
    await context.close();
  }, 120_000);
});
