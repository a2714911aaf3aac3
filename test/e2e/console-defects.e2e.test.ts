import { QueueName } from '@tollgate/queue';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callMeta, connectAgent, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, FixtureTool, startFixtureServer } from '../fixtures/http-fixture-server';
import { eventually, expectAccessible, signInWithToken, saveScreenshot } from '../support/console-browser';
import { ConsolePlatform, startConsolePlatform } from '../support/console-platform';

const tool = (name: string, description: string): FixtureTool => ({
  definition: { name, description, inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  run: () => ({ content: [{ type: 'text' as const, text: `ran ${name}` }] }),
});

/** The element that has focus: its tag, accessible text and test id, or "body". */
const focused = (page: Page) =>
  page.evaluate(`(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return 'body';
    return el.tagName.toLowerCase() + ':' + (el.getAttribute('aria-label') || el.textContent || '').trim();
  })()`) as Promise<string>;

/**
 * The console's second round of defects (issue 28), each as a person meets it in a real browser,
 * on a real platform: an org in New York that reviews its tools, a real governed call that fires
 * a key budget's alert, and the org admin, finance and a team admin.
 */
describe('console defects, in a real browser', () => {
  let p: ConsolePlatform;
  let fixture: FixtureServer;
  let browser: Browser;
  let agent: Client | undefined;
  let orgId: string;
  let upstreamId: string;
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  const tools: FixtureTool[] = [tool('lookup', 'Looks up a word in the dictionary.'), tool('translate', 'Translates.')];

  const sync = async () => {
    const res = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [res.body.jobId]);
  };

  beforeAll(async () => {
    p = await startConsolePlatform();
    fixture = await startFixtureServer(tools);
    orgId = (
      await p.admin('POST', '/v1/orgs', {
        name: 'Hudson',
        slug: 'hudson-defects',
        autoApproveTools: false,
        timeZone: 'America/New_York',
      })
    ).body.id;
    ids.research = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'research' })).body.id;
    ids.ops = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'ops' })).body.id;
    upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'dict',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
      })
    ).body.id;
    await sync();
    const first = (await p.admin('GET', `/v1/orgs/${orgId}/tools`)).body as { id: string; definitionHash: string }[];
    await p.admin('POST', `/v1/orgs/${orgId}/tools/review`, {
      decisions: first.map((t) => ({ toolId: t.id, decision: 'APPROVE', definitionHash: t.definitionHash })),
    });
    // The upstream changes lookup's description after approval: agents keep the approved one.
    tools[0] = tool('lookup', 'Looks up a word in any language.');
    await sync();

    await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId,
      toolPattern: 'translate',
      perCallMicros: 1_250_000,
    });
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['dict:*'], deny: [] });
    ids.rita = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'rita@hudson.test', name: 'Rita' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.research}/members`, { userId: ids.rita });
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
      teamId: ids.research,
      userId: ids.rita,
      name: 'rita-agent',
    });
    ids.key = key.body.key.id;
    ids.keyPrefix = key.body.key.prefix;
    // The key's own budget: one call (1.25 of 2.00) crosses its 50 % threshold.
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'KEY',
          scopeId: ids.key,
          period: 'MONTH',
          limitMicros: 2_000_000,
          alertThresholds: [50],
        })
      ).status,
    ).toBe(200);
    agent = await connectAgent(p.edgeUrl, key.body.secret, 'rita');
    const call = await agent.callTool({ name: 'dict__translate', arguments: { text: 'hi' } });
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callMeta(call as never)!.callId]);
    // The alert is written by the worker once the call is charged: wait for it (no fixed sleep).
    for (let i = 0; ; i++) {
      if (((await p.admin('GET', `/v1/orgs/${orgId}/alerts`)).body as unknown[]).length === 1) break;
      if (i === 200) throw new Error('the key budget’s alert did not fire');
      await new Promise((r) => setTimeout(r, 100));
    }

    tokens.admin = await p.issueToken({ role: 'ORG_ADMIN', orgId, name: 'hudson admin' });
    tokens.teamAdmin = await p.issueToken({ role: 'TEAM_ADMIN', orgId, teamId: ids.ops, name: 'ops lead' });
    browser = await p.launchBrowser();
  });

  afterAll(async () => {
    await agent?.close();
    await fixture?.close();
    await p?.close();
  });

  it('should save a typed tool pattern as typed (no `*` in front), preview what it matches, and ask for an empty one', async () => {
    const page = await p.openConsole(tokens.admin, '/console/prices');
    await page.getByTestId('new-price').click();
    await page.getByTestId('price-per-call').fill('0.01');
    await page.getByTestId('price-submit').click();
    await page.getByText('Type a pattern: a tool name, or * for every tool').waitFor(); // one (a locator is strict)
    // Typed key by key, as a person does: the field starts empty.
    await page.getByTestId('price-pattern').pressSequentially('lookup');
    await page.getByTestId('price-preview').getByText('Matches 1 tool: dict__lookup.').waitFor();
    await page.keyboard.press('Escape'); // closes the suggestions, not the dialog
    await page.getByTestId('price-submit').click();
    await page.getByTestId('price-row').filter({ hasText: 'lookup' }).waitFor();
    const history = (await p.admin('GET', `/v1/orgs/${orgId}/prices/history`)).body as { toolPattern: string }[];
    expect(history.map((r) => r.toolPattern).sort()).toEqual(['lookup', 'translate']);
  });

  it('should name a key budget in the alerts by its key, and show enums as words', async () => {
    const page = await p.openConsole(tokens.admin, '/console/alerts');
    const row = page.getByTestId('alert-row');
    await row.waitFor();
    expect(await row.textContent()).toContain(`Key rita-agent (${ids.keyPrefix}) · monthly · hard`);
    expect(await row.textContent()).not.toContain('a key');

    await page.getByRole('link', { name: 'Budgets' }).click();
    await page.getByTestId('budgets-table').waitFor();
    expect(await page.getByTestId('budgets-table').textContent()).toContain('monthly');
    expect(await page.locator('main').textContent()).not.toMatch(/\bMONTH\b|\bHARD\b/);
    await page.getByRole('link', { name: 'Upstreams and tools' }).click();
    await page.getByTestId('upstreams-table').waitFor();
    expect(await page.getByTestId('upstream-row').textContent()).toContain('Streamable HTTP');
    expect(await page.locator('main').textContent()).not.toMatch(/STREAMABLE_HTTP|STATIC_SECRET|\bSTANDARD\b/);
  });

  it('should show in "as agents see it" the approved description, not the one waiting for review', async () => {
    const page = await p.openConsole(tokens.admin, '/console/upstreams');
    const lookup = page.getByTestId('tool-row').filter({ hasText: 'dict__lookup' });
    await lookup.waitFor();
    expect(await lookup.getByTestId('tool-description').textContent()).toBe('Looks up a word in the dictionary.');
    expect(await lookup.textContent()).not.toContain('any language');
    expect(await lookup.getByTestId('tool-pending-note').textContent()).toContain('agents still get the approved one');
  });

  it('should give focus back to the opener after a dialog, have one nav and one main landmark, and a skip link', async () => {
    const page = await p.openConsole(tokens.admin, '/console/keys');
    await page.getByTestId('keys-table').waitFor();
    expect(await page.getByRole('navigation').count()).toBe(1);
    expect(await page.getByRole('main').count()).toBe(1);

    const settings = page.getByRole('button', { name: /^Settings of rita-agent/ });
    await settings.click();
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await eventually(() => focused(page)).toMatch(/^button:Settings of rita-agent/);

    await page.getByTestId('issue-key').click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await eventually(() => focused(page)).toBe('button:Issue a key');

    // The first Tab from the top reaches the skip link; following it puts focus in the main content.
    await page.reload();
    await page.getByTestId('keys-table').waitFor();
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('a:Skip to content');
    await page.keyboard.press('Enter');
    await eventually(() => page.evaluate(`document.activeElement.id`)).toBe('main-content');
  });

  it('should set a key expiry as a day in the org’s zone, as everything else is shown', async () => {
    const page = await p.openConsole(tokens.admin, '/console/keys');
    await page.getByRole('button', { name: /^Settings of rita-agent/ }).click();
    await page.getByTestId('key-expiry').fill('2031-03-15');
    await page.getByTestId('key-settings-save').click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    const key = (await p.admin('GET', `/v1/orgs/${orgId}/keys/${ids.key}`)).body as { expiresAt: string };
    // Midnight in New York (EDT, UTC-4, on 15 March 2031), not midnight UTC.
    expect(key.expiresAt).toBe('2031-03-15T04:00:00.000Z');
    const row = page.getByTestId('key-row').filter({ hasText: 'rita-agent' });
    await eventually(() => row.getByTestId('key-expires').textContent()).toMatch(/Mar 15, 2031, 12:00\s?AM/);
    await page.getByRole('button', { name: /^Settings of rita-agent/ }).click();
    expect(await page.getByTestId('key-expiry').inputValue()).toBe('2031-03-15');
  });

  it('should keep the overview when one report fails, with the error in that panel only', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    // The tool ranking's report fails (the API answering 500 for it); every other report answers.
    await page.route(/\/reports\/spend\?.*groupBy=tool(&|$)/, (route) =>
      route.fulfill({ status: 500, contentType: 'application/json', body: '{"message":"report store timed out"}' }),
    );
    await page.goto(`${p.adminUrl}/console/`);
    await page.getByLabel('Admin token').fill(tokens.admin);
    await page.getByRole('button', { name: 'Sign in with token' }).click();
    await page.getByTestId('overview-total-spend').waitFor();
    expect(await page.getByTestId('overview-total-spend').getAttribute('data-micros')).toBe('1250000');
    await page.getByTestId('top-tools').getByTestId('error-state').waitFor();
    expect(await page.getByTestId('top-tools').textContent()).toContain('report store timed out');
    await page.getByTestId('top-keys').getByText('rita-agent').waitFor();
    expect(await page.getByTestId('error-state').count()).toBe(1);
    // The budgets are a request of their own.
    await eventually(() => page.getByTestId('budget-row').count()).toBe(1);
    await expectAccessible(page, 'overview with a failed panel');
    await context.close();
  });

  it('should explain an out-of-scope link without raw ids or a retry that cannot work, and offer the way back', async () => {
    const page = await p.openConsole(tokens.teamAdmin, `/console/explorer?teamId=${ids.research}`);
    const error = page.getByTestId('error-state');
    await error.waitFor();
    const text = (await error.textContent()) ?? '';
    expect(text).toContain('outside what you may see');
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(await error.getByRole('button', { name: 'Try again' }).count()).toBe(0);
    await error.getByRole('button', { name: 'Show what you may see' }).click();
    await page.getByTestId('scope-note').getByText('Your team: ops').waitFor();
    expect(new URL(page.url()).search).toBe('');
  });

  it('should send no report while a day is being typed, open on the month to date, and take presets', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    const page = await signInWithToken(context, p.adminUrl, tokens.admin, '/console/explorer');
    await page.getByTestId('explorer-total-cost').waitFor();
    // The same default as the overview: this month, in the org's zone.
    expect(await page.getByTestId('explorer-preset').inputValue()).toBe('This month');
    const asked: { from: string; to: string }[] = [];
    page.on('request', (r) => {
      const q = new URL(r.url()).searchParams;
      if (r.url().includes('/reports/spend?')) asked.push({ from: q.get('from')!, to: q.get('to')! });
    });
    // Typed key by key as a person does (month, day, then the year's four digits): the field holds
    // 0002-10-27, 0020-10-27, 0202-10-27 on the way; none of them may reach the API.
    await page.getByTestId('explorer-from').focus();
    await page.keyboard.type('10272026', { delay: 60 });
    await eventually(() => asked.map((a) => a.from)).toContain('2026-10-27');
    // The previous period's totals follow with a range of their own (ending the day before): of the
    // typed range, only the whole day was asked for.
    const { to } = asked.find((a) => a.from === '2026-10-27')!;
    expect(asked.filter((a) => a.to === to).map((a) => a.from)).toEqual(['2026-10-27']);
    expect(new URL(page.url()).searchParams.get('from')).toBe('2026-10-27');
    expect(await page.getByTestId('error-state').count()).toBe(0);

    await page.getByTestId('explorer-preset').click();
    await page.getByRole('option', { name: 'Last month' }).click();
    await eventually(() => new URL(page.url()).searchParams.get('to')).toMatch(/^\d{4}-\d{2}-(28|29|30|31)$/);
    await context.close();
  });

  it('should badge the tools waiting for review in the navigation, and say how fresh the overview is', async () => {
    const page = await p.openConsole(tokens.admin);
    const badge = page.getByTestId('nav-badge-upstreams');
    await badge.waitFor();
    expect(await badge.textContent()).toBe('1 waiting for review');
    await page.getByTestId('overview-total-spend').waitFor();
    // The age ticks once a second: give it more than poll's default second to show 1 s.
    await expect
      .poll(() => page.getByTestId('overview-updated-age').textContent(), { timeout: 10_000 })
      .toMatch(/^Updated [1-9]\d* s ago$/);
    const asked = page.waitForRequest((r) => r.url().includes('/reports/spend?'));
    await page.getByTestId('overview-updated').getByRole('button', { name: 'Refresh' }).click();
    await asked;
    await expectAccessible(page, 'overview with badges');
  });

  it('should have a favicon, on the console and at the origin', async () => {
    const icon = await fetch(`${p.adminUrl}/console/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toContain('image/svg+xml');
    const root = await fetch(`${p.adminUrl}/favicon.ico`, { redirect: 'manual' });
    expect(root.headers.get('location')).toBe('/console/favicon.svg');
    const page = await p.openConsole(tokens.admin, '/console/keys');
    expect(await page.locator('link[rel=icon]').getAttribute('href')).toBe('/console/favicon.svg');
  });

  it('should fold the navigation away on a phone, open it from the header, and close it on navigating', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await signInWithToken(context, p.adminUrl, tokens.admin);
    await page.getByTestId('overview-total-spend').waitFor();
    const nav = page.getByRole('navigation', { name: 'Console pages' });
    expect(await nav.isVisible()).toBe(false);
    // Nothing covers the page: the total is visible at once.
    expect(await page.getByTestId('overview-total-spend').isVisible()).toBe(true);
    await expectAccessible(page, 'overview at 390 px');
    await saveScreenshot(page, 'overview-phone.png', { fullPage: false });

    await page.getByRole('button', { name: 'Open navigation' }).click();
    await nav.waitFor({ state: 'visible' });
    await expectAccessible(page, 'navigation open at 390 px');
    await nav.getByRole('link', { name: 'Keys' }).click();
    await page.getByTestId('keys-table').waitFor();
    await eventually(() => nav.isVisible()).toBe(false);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Keys');
    await context.close();
  });
});
