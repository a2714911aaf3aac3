import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { QueueName } from '@tollgate/queue';
import { callMeta, connectAgent, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { readFile } from 'node:fs/promises';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { AuthorizationServer, startAuthorizationServer } from '../fixtures/oauth-authorization-server';
import { decimalToMicros, eventually, expectAccessible, parseCsv } from '../support/console-browser';
import { freePort } from '../support/oauth-test-client';
import { ConsolePlatform, startConsolePlatform } from '../support/console-platform';

/**
 * Every role signs in to the console through single sign-on in Chromium: the sign-in page, the
 * organisation's identity provider (a real oidc-provider), and back to /console/ with the session
 * cookie. Each then does its main job against the running platform with real data.
 */
const CALLBACK = '/v1/auth/sso/callback';
const SESSION_COOKIE = 'tollgate_session';
const TOKEN_KEY = 'tollgate.console.adminToken';
const PRICE = 125_000;
const BIG_PRICE = 1_234_567;
const utcDay = (d = new Date()) => d.toISOString().slice(0, 10);
const EMAILS = {
  orgAdmin: 'boss@acme.test',
  finance: 'fin@acme.test',
  teamAdmin: 'lead@acme.test',
  member: 'dev@acme.test',
  bob: 'bob@acme.test',
};

describe('console sign-in through single sign-on, for each role', () => {
  let p: ConsolePlatform;
  let idp: AuthorizationServer;
  let db: PrismaClient;
  let fixture: FixtureServer;
  let browser: Browser;
  let adminUrl: string;
  let orgId: string;
  const agents: Client[] = [];
  const ids = { data: '', web: '', upstream: '', orgAdmin: '', finance: '', teamAdmin: '', member: '', bob: '' };
  const teamBudgets = { data: '', web: '' };
  let ownBudget = '';

  /** The ledger's own sums over [from, to] (UTC days: the org's zone here), optionally of one team or person. */
  async function ledger(from: string, to: string, only: { teamId?: string; userId?: string } = {}) {
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

  /**
   * A person's sign-in as they do it: the console's sign-in page, "Continue with single sign-on"
   * with the org's short name, the identity provider's login (this test IdP's login form is its
   * `?login=<sub>` parameter), and back at the console with the session cookie.
   */
  async function goToIdp(context: BrowserContext, org: string, start = '/console/'): Promise<Page> {
    const page = await context.newPage();
    await page.goto(`${adminUrl}${start}`);
    await page.getByLabel('Organisation').fill(org);
    await page.getByRole('button', { name: 'Continue with single sign-on' }).click();
    await page.waitForURL((u) => u.href.startsWith(`${idp.issuer}/interaction/`));
    return page;
  }

  async function loginAtIdp(page: Page, email: string): Promise<void> {
    const login = new URL(page.url());
    login.searchParams.set('login', email);
    await page.goto(login.href);
  }

  async function signInWithSso(context: BrowserContext, email: string): Promise<Page> {
    const page = await goToIdp(context, 'acme');
    await loginAtIdp(page, email);
    await page.getByTestId('role-badge').waitFor();
    expect(page.url()).toBe(`${adminUrl}/console/`);
    // Signed in by the cookie alone: nothing kept in the tab.
    expect(await page.evaluate(`sessionStorage.getItem(${JSON.stringify(TOKEN_KEY)})`)).toBeNull();
    const cookie = (await context.cookies(adminUrl)).find((c) => c.name === SESSION_COOKIE);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    return page;
  }

  /**
   * A request made by the page itself (its origin, its cookie), as a script in the console would:
   * with the session's CSRF token or without.
   */
  async function fetchFromPage(
    page: Page,
    method: string,
    route: string,
    body: unknown,
    withCsrf: boolean,
  ): Promise<{ status: number; body: any }> {
    // A string, not a function: this file is type-checked without the DOM library.
    return (await page.evaluate(`(async () => {
      const me = await (await fetch('/v1/auth/session')).json();
      const headers = { 'content-type': 'application/json' };
      if (${withCsrf}) headers['x-csrf-token'] = me.csrfToken;
      const res = await fetch(${JSON.stringify(route)}, {
        method: ${JSON.stringify(method)},
        headers,
        body: ${JSON.stringify(body === undefined ? null : JSON.stringify(body))},
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    })()`)) as { status: number; body: any };
  }

  /** Issues a key in the open console (Keys page), returns its secret after checking it is shown once. */
  async function issueKey(page: Page, name: string, choose: { team?: string; owner?: string }): Promise<string> {
    await page.getByTestId('issue-key').click();
    await page.getByTestId('key-name').fill(name);
    if (choose.team) {
      await page.getByTestId('key-team').click();
      await page.getByRole('option', { name: choose.team }).click();
    }
    if (choose.owner) {
      await page.getByTestId('key-owner').click();
      await page.getByRole('option', { name: choose.owner }).click();
    }
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'POST' && r.url() === `${adminUrl}/v1/orgs/${orgId}/keys`),
      page.getByTestId('key-submit').click(),
    ]);
    // The change rides on the cookie session with its CSRF token, not on a bearer token.
    const headers = request.headers();
    expect(headers['x-csrf-token']).toMatch(/.{20,}/);
    expect(headers.authorization).toBeUndefined();
    await page.getByTestId('issued-secret').or(page.getByRole('dialog').getByRole('alert')).waitFor();
    expect(await page.getByRole('dialog').getByRole('alert').allTextContents()).toEqual([]);
    expect(await page.getByRole('dialog').getByText('This is the only time the secret is shown').count()).toBe(1);
    const secret = (await page.getByTestId('issued-secret').textContent())!.trim();
    expect(secret).toMatch(/^tg_/);
    return secret;
  }

  /** The overview's and the explorer's month to date, as the signed-in person sees them, against the ledger's sums. */
  async function expectSpendShown(
    page: Page,
    only: { teamId?: string; userId?: string },
    scopeNote: string,
  ): Promise<void> {
    const today = utcDay();
    const month = await ledger(`${today.slice(0, 8)}01`, today, only);
    await page.getByRole('link', { name: 'Overview' }).click();
    const spend = page.getByTestId('overview-total-spend');
    await spend.waitFor();
    expect(await spend.getAttribute('data-micros')).toBe(String(month.costMicros));
    expect(await page.getByTestId('overview-calls').textContent()).toBe(String(month.calls));
    // The page says whose spend it is (the team's name arrives with its own request).
    await eventually(() => page.getByTestId('scope-note').textContent()).toContain(scopeNote);
    await page.getByRole('link', { name: 'Spend explorer' }).click();
    const total = page.getByTestId('explorer-total-cost');
    await total.waitFor();
    expect(await total.getAttribute('data-micros')).toBe(String(month.costMicros));
    await eventually(() => page.getByTestId('scope-note').textContent()).toContain(scopeNote);
  }

  async function keyNames(page: Page): Promise<string[]> {
    await page.getByTestId('keys-table').waitFor();
    return (await page.getByTestId('key-row').locator('td:first-child').allTextContents()).sort();
  }

  beforeAll(async () => {
    idp = await startAuthorizationServer();
    const adminPort = await freePort();
    adminUrl = `http://127.0.0.1:${adminPort}`;
    const client = (await (
      await fetch(`${idp.issuer}/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          redirect_uris: [`${adminUrl}${CALLBACK}`],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        }),
      })
    ).json()) as { client_id: string; client_secret: string };
    p = await startConsolePlatform({
      ADMIN_PORT: String(adminPort),
      ADMIN_PUBLIC_URL: adminUrl,
    });
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startFixtureServer();

    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Acme', slug: 'acme' })).body.id;
    ids.data = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'data' })).body.id;
    ids.web = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'web' })).body.id;
    const names: Record<keyof typeof EMAILS, string> = {
      orgAdmin: 'Boss',
      finance: 'Fin',
      teamAdmin: 'Lead',
      member: 'Dev',
      bob: 'Bob',
    };
    for (const [who, email] of Object.entries(EMAILS) as [keyof typeof EMAILS, string][]) {
      ids[who] = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email, name: names[who] })).body.id;
    }
    // Roles as the identity provider's people hold them in Tollgate: org roles, and team membership.
    const roles = [
      await p.admin('PUT', `/v1/orgs/${orgId}/users/${ids.orgAdmin}/org-role`, { role: 'ORG_ADMIN' }),
      await p.admin('PUT', `/v1/orgs/${orgId}/users/${ids.finance}/org-role`, { role: 'FINANCE' }),
      await p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.data}/members`, { userId: ids.finance }),
      await p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.web}/members`, {
        userId: ids.teamAdmin,
        isTeamAdmin: true,
      }),
      await p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.data}/members`, { userId: ids.member }),
      await p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.web}/members`, { userId: ids.bob }),
    ];
    for (const r of roles) expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    // The org's identity provider; people unknown to Tollgate are not created on sign-in.
    const idpPut = await p.admin('PUT', `/v1/orgs/${orgId}/identity-provider`, {
      issuer: idp.issuer,
      clientId: client.client_id,
      clientSecret: client.client_secret,
    });
    expect(idpPut.status, JSON.stringify(idpPut.body)).toBe(200);
    expect(idpPut.body).toMatchObject({ sessionRedirectUri: `${adminUrl}${CALLBACK}`, createUsers: false });

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
    for (const [toolPattern, perCallMicros] of [
      ['*', PRICE],
      ['huge', BIG_PRICE],
    ] as const) {
      expect(
        (await p.admin('POST', `/v1/orgs/${orgId}/prices`, { upstreamId: ids.upstream, toolPattern, perCallMicros }))
          .status,
      ).toBe(201);
    }
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
    // The member's own monthly budget: their budgets page shows it, and none of the teams'.
    const memberBudget = await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
      scope: 'USER',
      scopeId: ids.member,
      period: 'MONTH',
      limitMicros: 5_000_000,
    });
    expect(memberBudget.status).toBe(200);
    ownBudget = memberBudget.body.id;
    // Each team's own monthly budget: a team admin's budgets page shows theirs only.
    for (const team of ['data', 'web'] as const) {
      const res = await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
        scope: 'TEAM',
        scopeId: ids[team],
        period: 'MONTH',
        limitMicros: 10_000_000,
      });
      expect(res.status).toBe(200);
      teamBudgets[team] = res.body.id;
    }

    const devKey = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
      teamId: ids.data,
      userId: ids.member,
      name: 'dev-agent',
    });
    const bobKey = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
      teamId: ids.web,
      userId: ids.bob,
      name: 'bob-agent',
    });
    // Real governed calls through the edge: dev (team data) 3 ok, one dearer, and a tool error; bob (web) 2 ok.
    const dev = await connectAgent(p.edgeUrl, devKey.body.secret, 'dev');
    const bob = await connectAgent(p.edgeUrl, bobKey.body.secret, 'bob');
    agents.push(dev, bob);
    const callIds: string[] = [];
    for (const [agent, tool] of [
      [dev, 'fx__ping'],
      [dev, 'fx__ping'],
      [dev, 'fx__huge'],
      [dev, 'fx__fail'],
      [bob, 'fx__ping'],
      [bob, 'fx__ping'],
    ] as const) {
      const res = await agent.callTool({ name: tool, arguments: tool === 'fx__huge' ? { lines: 5 } : {} });
      callIds.push(callMeta(res as never)!.callId);
    }
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, callIds);
    browser = await p.launchBrowser();
  });

  afterAll(async () => {
    for (const a of agents) await a.close();
    await fixture?.close();
    await db?.$disconnect();
    await p?.close();
    await idp?.close();
  });

  it('should say why on the sign-in page when single sign-on fails, not show a blank page or JSON', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${adminUrl}/console/`);
    await page.getByRole('button', { name: 'Continue with single sign-on' }).waitFor();
    await expectAccessible(page, 'sign-in');

    // A mistyped organisation.
    await page.getByLabel('Organisation').fill('acmee');
    await page.getByRole('button', { name: 'Continue with single sign-on' }).click();
    const error = page.getByTestId('sso-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/No organisation with that short name signs in with single sign-on/);
    expect(page.url()).toBe(`${adminUrl}/console/`); // the code left the address: a reload shows a clean page
    expect(await page.getByLabel('Organisation').inputValue()).toBe('acmee');
    await expectAccessible(page, 'sign-in, unknown organisation');

    // Someone the identity provider knows but Tollgate does not (accounts are not created on sign-in).
    const stranger = await goToIdp(context, 'acme');
    await loginAtIdp(stranger, 'stranger@acme.test');
    await stranger.getByTestId('sso-error').waitFor();
    expect(await stranger.getByTestId('sso-error').textContent()).toMatch(
      /this organisation has no active Tollgate account with your email\. Ask an administrator to add you\./,
    );
    expect((await context.cookies(adminUrl)).find((c) => c.name === SESSION_COOKIE)).toBeUndefined();
    await expectAccessible(stranger, 'sign-in, unknown user');

    // The person cancels at the identity provider, which sends the browser back with an error (a
    // new browser: this one is still signed in at the provider as the stranger).
    const fresh = await browser.newContext();
    const [authorize, cancelled] = await Promise.all([
      fresh.waitForEvent('request', (r) => r.url().startsWith(`${idp.issuer}/auth?`)),
      goToIdp(fresh, 'acme'),
    ]);
    const state = new URL(authorize.url()).searchParams.get('state')!;
    expect(state).toBeTruthy();
    await cancelled.goto(`${adminUrl}${CALLBACK}?error=access_denied&state=${encodeURIComponent(state)}`);
    await cancelled.getByTestId('sso-error').waitFor();
    expect(await cancelled.getByTestId('sso-error').textContent()).toMatch(
      /Your identity provider did not sign you in/,
    );
    expect(await cancelled.getByRole('heading', { name: 'Sign in to the Tollgate console' }).count()).toBe(1);
    await fresh.close();

    // A crafted link naming no code of ours (here an object property) gets the general message.
    const crafted = await context.newPage();
    await crafted.goto(`${adminUrl}/console/?signInError=__proto__`);
    await crafted.getByTestId('sso-error').waitFor();
    expect(await crafted.getByTestId('sso-error').textContent()).toMatch(/Single sign-on did not finish/);

    // An API client asking for JSON still gets the JSON error.
    const json = await fetch(`${adminUrl}/v1/auth/sso/acmee/start`, { redirect: 'manual' });
    expect(json.status).toBe(404);
    await context.close();
  });

  it('should let an org admin signed in by SSO see every page, issue a key through the cookie session, and sign out for good', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: adminUrl });
    const page = await signInWithSso(context, EMAILS.orgAdmin);
    expect(await page.getByTestId('role-badge').textContent()).toBe('Org admin');
    expect(await page.getByTestId('signed-in-as').textContent()).toBe('Boss');
    const nav = (await page.locator('nav[aria-label="Console pages"] a').allTextContents()).sort();
    expect(nav).toEqual(
      [
        'Agent trail',
        'Alerts',
        'Audit log',
        'Budgets',
        'Calls',
        'Keys',
        'My connections',
        'Organisation settings',
        'Overview',
        'Policies',
        'Prices',
        'Spend explorer',
        'Teams and people',
        'Upstreams and tools',
      ].sort(),
    );

    await page.getByRole('link', { name: 'Keys' }).click();
    expect(await keyNames(page)).toEqual(['bob-agent', 'dev-agent']);
    const secret = await issueKey(page, 'boss-made', { team: 'web', owner: 'Bob (bob@acme.test)' });
    await page.getByTestId('copy-secret').click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    // The secret is a real key: the edge lists its tools.
    const agent = await connectAgent(p.edgeUrl, secret, 'boss-made');
    agents.push(agent);
    expect((await agent.listTools()).tools.map((t) => t.name)).toContain('fx__ping');
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByTestId('key-row').filter({ hasText: 'boss-made' }).waitFor();
    expect(await page.getByTestId('issued-secret').count()).toBe(0); // shown once, gone with the dialog
    await expectAccessible(page, 'keys (org admin, SSO)');

    // The same change from the page's own context without the CSRF header is refused.
    const noCsrf = await fetchFromPage(page, 'POST', `/v1/orgs/${orgId}/teams`, { name: 'no-csrf' }, false);
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.message).toMatch(/x-csrf-token/i);
    const teams = (await p.admin('GET', `/v1/orgs/${orgId}/teams`)).body as { name: string }[];
    expect(teams.map((t) => t.name)).not.toContain('no-csrf');

    // Sign out: back to the sign-in page, and the old cookie opens nothing any more.
    const cookie = (await context.cookies(adminUrl)).find((c) => c.name === SESSION_COOKIE)!.value;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the Tollgate console' }).waitFor();
    expect((await context.cookies(adminUrl)).find((c) => c.name === SESSION_COOKIE)).toBeUndefined();
    const replayed = await fetch(`${adminUrl}/v1/orgs/${orgId}/keys`, {
      headers: { cookie: `${SESSION_COOKIE}=${cookie}` },
    });
    expect(replayed.status).toBe(401);
    await page.reload();
    await page.getByRole('button', { name: 'Continue with single sign-on' }).waitFor();
    expect(await page.getByTestId('role-badge').count()).toBe(0);
    await context.close();
  });

  it('should show finance totals equal to the ledger, a CSV of them, and no way to change anything', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, acceptDownloads: true });
    const page = await signInWithSso(context, EMAILS.finance);
    expect(await page.getByTestId('role-badge').textContent()).toBe('Finance');

    const today = utcDay();
    const month = await ledger(`${today.slice(0, 8)}01`, today);
    expect(month).toMatchObject({ calls: 6, errors: 1 });
    const spend = page.getByTestId('overview-total-spend');
    await spend.waitFor();
    expect(await spend.getAttribute('data-micros')).toBe(String(month.costMicros));
    expect(await page.getByTestId('overview-calls').textContent()).toBe(String(month.calls));

    await page.getByRole('link', { name: 'Spend explorer' }).click();
    const total = page.getByTestId('explorer-total-cost');
    await total.waitFor();
    const range = await ledger(`${today.slice(0, 8)}01`, today); // the explorer opens on the month to date
    expect(await total.getAttribute('data-micros')).toBe(String(range.costMicros));
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('explorer-download').click(),
    ]);
    const csv = parseCsv(await readFile((await download.path())!, 'utf8'));
    const footer = csv[csv.length - 1];
    expect(footer[0]).toBe('Total');
    const cost = csv[0].findIndex((h) => /^Cost \(/.test(h));
    expect(decimalToMicros(footer[cost])).toBe(range.costMicros);
    expect(csv.slice(1, -1).reduce((s, r) => s + decimalToMicros(r[cost]), 0n)).toBe(range.costMicros);

    // Reads every page, changes nothing: no write controls anywhere...
    await page.getByRole('link', { name: 'Keys' }).click();
    expect(await keyNames(page)).toEqual(['bob-agent', 'boss-made', 'dev-agent']);
    expect(await page.getByTestId('issue-key').count()).toBe(0);
    expect(await page.getByRole('button', { name: /^(Settings|Rotate|Revoke) / }).count()).toBe(0);
    await page.getByRole('link', { name: 'Budgets' }).click();
    await page.getByTestId('budgets-table').waitFor();
    expect(await page.getByRole('button', { name: /^Edit budget/ }).count()).toBe(0);
    await page.getByRole('link', { name: 'Upstreams and tools' }).click();
    await page.getByTestId('upstream-row').first().waitFor();
    expect(await page.getByRole('button', { name: /^Sync now/ }).count()).toBe(0);
    await page.getByTestId('review-tab').click();
    await page.getByTestId('review-upstream').waitFor();
    expect(await page.getByTestId('approve-selected').count()).toBe(0);
    await page.getByRole('link', { name: 'Prices' }).click();
    await page.getByTestId('price-row').first().waitFor();
    expect(await page.getByTestId('new-price').count()).toBe(0);
    expect(await page.getByRole('button', { name: /^End the rule/ }).count()).toBe(0);
    await page.getByRole('link', { name: 'Policies' }).click();
    await page.getByTestId('policy-list-deny').waitFor();
    expect(await page.getByLabel(/^Pattern to add to/).count()).toBe(0);
    await expectAccessible(page, 'policies (finance, SSO)');

    // ...and the API refuses a change made from the page, CSRF token and all.
    const key = await fetchFromPage(
      page,
      'POST',
      `/v1/orgs/${orgId}/keys`,
      { name: 'fin-sneaky', teamId: ids.data, userId: ids.finance },
      true,
    );
    expect(key.status).toBe(403);
    expect(key.body.message).toMatch(/FINANCE may not/);
    const budget = await fetchFromPage(
      page,
      'PUT',
      `/v1/orgs/${orgId}/budgets`,
      { scope: 'ORG', scopeId: orgId, period: 'MONTH', limitMicros: 1 },
      true,
    );
    expect(budget.status).toBe(403);
    const keys = (await p.admin('GET', `/v1/orgs/${orgId}/keys`)).body as { name: string }[];
    expect(keys.map((k) => k.name)).not.toContain('fin-sneaky');
    await context.close();
  });

  it("should show a team admin their team's keys only, let them issue one for their team, and their team's spend", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await signInWithSso(context, EMAILS.teamAdmin);
    expect(await page.getByTestId('role-badge').textContent()).toBe('Team admin');
    await page.getByRole('link', { name: 'Keys' }).click();
    expect(await keyNames(page)).toEqual(['bob-agent', 'boss-made']);

    await issueKey(page, 'lead-made', { owner: 'Lead (lead@acme.test)' });
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByTestId('key-row').filter({ hasText: 'lead-made' }).waitFor();
    expect(await keyNames(page)).toEqual(['bob-agent', 'boss-made', 'lead-made']);
    const all = (await p.admin('GET', `/v1/orgs/${orgId}/keys`)).body as { id: string; name: string; teamId: string }[];
    expect(all.find((k) => k.name === 'lead-made')).toMatchObject({ teamId: ids.web });
    await expectAccessible(page, 'keys (team admin, SSO)');

    // Another team's keys are not theirs to see, from the page's context either.
    const listed = await fetchFromPage(page, 'GET', `/v1/orgs/${orgId}/keys`, undefined, false);
    expect(listed.status).toBe(200);
    expect(new Set((listed.body as { teamId: string }[]).map((k) => k.teamId))).toEqual(new Set([ids.web]));
    const devKey = all.find((k) => k.name === 'dev-agent')!;
    const other = await fetchFromPage(page, 'GET', `/v1/orgs/${orgId}/keys/${devKey.id}`, undefined, false);
    expect(other.status, JSON.stringify(other.body)).toBeGreaterThanOrEqual(403);

    // Budgets: their team's, read-only; not the org's nor the other team's.
    await page.getByRole('link', { name: 'Budgets' }).click();
    await page.getByTestId('budget-line').first().waitFor();
    const budgetIds = await page
      .getByTestId('budget-line')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-budget-id')));
    expect(budgetIds).toEqual([teamBudgets.web]);
    expect(await page.getByTestId('budget-bar').count()).toBe(1);
    expect(await page.getByTestId('new-budget').count()).toBe(0);
    await expectAccessible(page, 'budgets (team admin, SSO)');

    // Spend: their team's only (bob's two calls), not the org's six.
    const today = utcDay();
    const [team, org] = [await ledger(today, today, { teamId: ids.web }), await ledger(today, today)];
    expect([team.calls, org.calls]).toEqual([2, 6]);
    await expectSpendShown(page, { teamId: ids.web }, 'Your team: web');
    await expectAccessible(page, 'spend explorer (team admin, SSO)');
    await context.close();
  });

  it('should show a member their own keys only, let them issue their own, their connections and their own spend', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await signInWithSso(context, EMAILS.member);
    expect(await page.getByTestId('role-badge').textContent()).toBe('Member');
    await page.getByRole('link', { name: 'Keys' }).click();
    expect(await keyNames(page)).toEqual(['dev-agent']);
    await issueKey(page, 'dev-laptop', {});
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByTestId('key-row').filter({ hasText: 'dev-laptop' }).waitFor();
    expect(await keyNames(page)).toEqual(['dev-agent', 'dev-laptop']);
    const all = (await p.admin('GET', `/v1/orgs/${orgId}/keys`)).body as {
      name: string;
      teamId: string;
      userId: string;
    }[];
    expect(all.find((k) => k.name === 'dev-laptop')).toMatchObject({ teamId: ids.data, userId: ids.member });

    await page.getByRole('link', { name: 'My connections' }).click();
    await page.getByRole('heading', { name: 'My connections', level: 1 }).waitFor();
    await page.getByText('Nothing to connect').waitFor();
    await expectAccessible(page, 'my connections (member, SSO)');

    // Budgets: their own, with its spend bar; read-only; not the teams' nor the org's.
    await page.getByRole('link', { name: 'Budgets' }).click();
    await page.getByTestId('budget-line').first().waitFor();
    const budgetIds = await page
      .getByTestId('budget-line')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-budget-id')));
    expect(budgetIds).toEqual([ownBudget]);
    expect(await page.getByTestId('budget-bar').count()).toBe(1);
    expect(await page.getByTestId('new-budget').count()).toBe(0);
    await expectAccessible(page, 'budgets (member, SSO)');

    // Spend: their own calls only (four, one an error), not their team's or the org's.
    expect((await ledger(utcDay(), utcDay(), { userId: ids.member })).calls).toBe(4);
    await expectSpendShown(page, { userId: ids.member }, 'Your own usage');
    await context.close();
  });
});
