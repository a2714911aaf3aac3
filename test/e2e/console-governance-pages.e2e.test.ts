import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { QueueName } from '@tollgate/queue';
import {
  callMeta,
  connectAgent,
  toolError,
  waitForJobs,
  waitForQueueIdle,
  waitForUsageEvents,
} from '@tollgate/testing';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Page } from 'playwright-core';
import { eventually, expectAccessible, saveScreenshot } from '../support/console-browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import {
  AuthorizationServer,
  authorizeInBrowser,
  startAuthorizationServer,
} from '../fixtures/oauth-authorization-server';
import { ProtectedServer, startProtectedServer } from '../fixtures/protected-mcp-server';
import { ConsolePlatform, startConsolePlatform } from '../support/console-platform';

const PRICE = 125_000;
// The admin API's public URL as the authorization server knows it (the OAuth redirect URI).
const ADMIN_PUBLIC_URL = 'http://tollgate-admin.test';
const CALLBACK_PREFIX = `${ADMIN_PUBLIC_URL}/v1/oauth/callback`;

describe('console governance pages in a real browser: policies, audit log, alerts, my connections', () => {
  let p: ConsolePlatform;
  let fixture: FixtureServer;
  let as: AuthorizationServer;
  let notes: ProtectedServer;
  let hooks: Server;
  let hookHits = 0;
  let orgId: string;
  const agents: Client[] = [];
  const ids = { data: '', ada: '', grace: '', adaKey: '', notes: '' };
  const tokens = { admin: '', finance: '', member: '' };
  let adaSecret = '';

  beforeAll(async () => {
    as = await startAuthorizationServer({ scope: 'mcp' });
    notes = await startProtectedServer(as.issuer);
    fixture = await startFixtureServer();
    // The alert webhook receiver: accepts every alert.
    let delivered!: () => void;
    const firstHit = new Promise<void>((r) => (delivered = r));
    hooks = createServer((req, res) =>
      req.resume().on('end', () => (hookHits++, res.writeHead(204).end(), delivered())),
    );
    await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
    p = await startConsolePlatform({ ADMIN_PUBLIC_URL });

    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Acme', slug: 'acme' })).body.id;
    ids.data = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'data' })).body.id;
    ids.ada = (
      await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'ada@acme.test', name: 'Ada Lovelace' })
    ).body.id;
    ids.grace = (
      await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'grace@acme.test', name: 'Grace Hopper' })
    ).body.id;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.data}/members`, { userId: ids.ada })).status).toBe(
      201,
    );
    const keyA = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
      teamId: ids.data,
      userId: ids.ada,
      name: 'ada-agent',
    });
    ids.adaKey = keyA.body.key.id;
    adaSecret = keyA.body.secret;
    const up = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'fx',
      transport: 'STREAMABLE_HTTP',
      url: fixture.url,
    });
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${up.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    const reg = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'notes',
      transport: 'STREAMABLE_HTTP',
      url: notes.url,
      authMode: 'PER_USER_OAUTH',
      oauth: { scope: 'mcp' },
    });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    ids.notes = reg.body.id;
    // The org allows the fixture's tools but denies fx:fail: the simulator must name that rule.
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fx:*'], deny: ['fx:fail'] })).status,
    ).toBe(200);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: up.body.id,
          toolPattern: '*',
          perCallMicros: PRICE,
        })
      ).status,
    ).toBe(201);
    // One call (0.125 of 0.2) crosses the 50 % threshold: an alert fires and is delivered to the webhook.
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'ORG',
          scopeId: orgId,
          period: 'MONTH',
          limitMicros: 200_000,
          alertThresholds: [50],
          mode: 'SOFT',
        })
      ).status,
    ).toBe(200);
    const hook = await p.admin('POST', `/v1/orgs/${orgId}/alert-webhooks`, {
      url: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`,
      description: 'finance relay',
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);

    tokens.admin = await p.issueToken({ role: 'ORG_ADMIN', orgId, userId: ids.grace, name: 'grace console' });
    tokens.finance = await p.issueToken({ role: 'FINANCE', orgId, name: 'acme finance' });
    tokens.member = await p.issueToken({ role: 'MEMBER', orgId, userId: ids.ada, teamId: ids.data, name: 'ada' });

    const agent = await connectAgent(p.edgeUrl, keyA.body.secret, 'ada');
    agents.push(agent);
    const res = await agent.callTool({ name: 'fx__ping', arguments: {} });
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callMeta(res as never)!.callId]);
    await firstHit;
    // The receiver answered; the delivery job records it before the queue is idle.
    await waitForQueueIdle(p.env.redisUrl, p.env.redisPrefix, QueueName.AlertDelivery);
  });

  afterAll(async () => {
    for (const a of agents) await a.close();
    await p?.close();
    await Promise.allSettled([fixture?.close(), notes?.close(), as?.close(), new Promise((r) => hooks?.close(r))]);
  });

  it('should simulate a key (a refused tool names its rule), dry-run a deny (the lost tool), then apply it with If-Match', async () => {
    const page = await p.openConsole(tokens.admin, '/console/policies', { width: 1280, height: 1400 });
    await page.getByTestId('policy-version').waitFor();
    expect(await page.getByTestId('policy-list-deny').textContent()).toContain('fx:fail');

    // Simulator: the key sees fx__ping at its price; fx__fail is refused by the org's deny rule.
    await page.getByTestId('simulator-key').click();
    await page.getByRole('option', { name: /ada-agent/ }).click();
    const fail = page.locator('[data-testid=simulator-row][data-tool=fx__fail]');
    await fail.waitFor();
    expect(await fail.getByTestId('simulator-refusal').textContent()).toBe(
      'Denied by rule fx:fail at organisation level (Acme)',
    );
    const ping = page.locator('[data-testid=simulator-row][data-tool=fx__ping]');
    expect(await ping.textContent()).toContain('Allowed');
    expect(await ping.locator('[data-micros]').getAttribute('data-micros')).toBe(String(PRICE));
    await expectAccessible(page, 'policies');
    await saveScreenshot(page, 'policies.png', { fullPage: true });

    // Dry run of denying fx:ping at the org level: ada-agent would lose fx__ping. Nothing written yet.
    const before = (await p.admin('GET', `/v1/orgs/${orgId}/policies/ORG/${orgId}`)).body;
    await page.getByLabel('Pattern to add to Denied tools').fill('fx:ping');
    await page.getByTestId('policy-list-deny').getByRole('button', { name: 'Add' }).click();
    await page.getByTestId('policy-dry-run').click();
    const row = page.getByTestId('dry-run-row');
    await row.waitFor();
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain('ada-agent');
    expect(await row.getByTestId('dry-run-lost').textContent()).toBe('fx__ping');
    expect((await p.admin('GET', `/v1/orgs/${orgId}/policies/ORG/${orgId}`)).body.deny).toEqual(['fx:fail']);
    await expectAccessible(page, 'policies dry run');

    await page.getByTestId('policy-apply').click();
    await page.getByTestId('policy-applied').waitFor();
    const after = (await p.admin('GET', `/v1/orgs/${orgId}/policies/ORG/${orgId}`)).body;
    expect(after.deny).toEqual(['fx:fail', 'fx:ping']);
    expect(after.version).toBe(before.version + 1);
    // The page reloads the applied policy after saying so: wait for its list to show it.
    await eventually(() => page.getByTestId('policy-list-deny').textContent()).toContain('fx:ping');

    // A change made elsewhere meanwhile: the page's stale version is refused (412), not overwritten.
    expect(
      (await p.admin('PATCH', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { deny: { add: ['fx:slow'] } })).status,
    ).toBe(200);
    await page.getByLabel('Pattern to add to Denied tools').fill('fx:huge');
    await page.getByTestId('policy-list-deny').getByRole('button', { name: 'Add' }).click();
    await page.getByTestId('policy-dry-run').click();
    await page.getByTestId('policy-apply').click();
    await page.getByText('Someone changed this policy meanwhile').waitFor();
    expect((await p.admin('GET', `/v1/orgs/${orgId}/policies/ORG/${orgId}`)).body.deny).toEqual([
      'fx:fail',
      'fx:ping',
      'fx:slow',
    ]);
  });

  it('should let finance read policies but change nothing, and a member simulate only their own keys', async () => {
    const fin = await p.openConsole(tokens.finance, '/console/policies');
    await fin.getByTestId('policy-list-deny').waitFor();
    expect(await fin.getByLabel('Pattern to add to Denied tools').count()).toBe(0);
    expect(await fin.getByRole('link', { name: 'My connections' }).count()).toBe(0);

    const member = await p.openConsole(tokens.member, '/console/policies');
    await member.getByTestId('simulator-key').click();
    // The list opens on the click; read it once it has opened.
    await eventually(() => member.getByRole('option').allTextContents()).toEqual([
      expect.stringContaining('ada-agent'),
    ]);
    expect(await member.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
  });

  it('should list the audit log with the person and the token of each change, filtered by who and what', async () => {
    const page = await p.openConsole(tokens.finance, '/console/audit', { width: 1280, height: 1000 });
    await page.getByTestId('audit-table').waitFor();
    await page.getByTestId('audit-action').click();
    await page.getByRole('option', { name: 'policy.patched', exact: true }).click();
    await page.getByTestId('audit-actor').click();
    await page.getByRole('option', { name: 'Grace Hopper <grace@acme.test>' }).click();
    const rows = page.getByTestId('audit-row');
    await eventually(() => rows.count()).toBe(1); // the browser's apply; the 412 wrote nothing
    expect(await rows.getByTestId('audit-who').textContent()).toBe('Grace Hoppergrace@acme.test');
    expect(await rows.getByTestId('audit-token').textContent()).toContain('grace console');
    // A range that ends yesterday (the org's days) hides it.
    const today = new Date().toISOString().slice(0, 10);
    await page.getByTestId('audit-to').fill(new Date(Date.parse(today) - 86_400_000).toISOString().slice(0, 10));
    await page.getByText('No change matches').waitFor();
    await page.getByTestId('audit-to').fill(today);
    await rows.first().waitFor();
    await expectAccessible(page, 'audit log');
  });

  it('should show the fired alert with its webhook delivery, and its webhook', async () => {
    const page = await p.openConsole(tokens.finance, '/console/alerts');
    const alert = page.getByTestId('alert-row');
    await alert.waitFor();
    expect(await alert.count()).toBe(1);
    expect(await alert.getByTestId('alert-threshold').textContent()).toBe('50 %');
    expect(await alert.locator('[data-micros]').getAttribute('data-micros')).toBe(String(PRICE));
    expect(await alert.getByTestId('alert-delivery').textContent()).toContain('Delivered');
    expect(hookHits).toBe(1);
    expect(await page.getByTestId('webhook-row').textContent()).toContain('finance relay');
    expect(await page.getByTestId('add-webhook').count()).toBe(0); // finance changes nothing
    await expectAccessible(page, 'alerts');
    await saveScreenshot(page, 'alerts.png', { fullPage: true });
  });

  it('should let a member connect their own account at a per-user OAuth upstream, then disconnect it', async () => {
    const page = await p.openConsole(tokens.member, '/console/connections', { width: 1280, height: 800 });
    const context = page.context();
    const row = page.locator('[data-testid=connection-row][data-upstream=notes]');
    await row.waitFor();
    expect(await row.getByTestId('connection-status').textContent()).toBe('Not connected');
    await expectAccessible(page, 'my connections');

    const started = page.waitForResponse(
      (r) => r.request().method() === 'POST' && r.url().includes(`/users/${ids.ada}/connections/${ids.notes}`),
    );
    const popup = context.waitForEvent('page');
    await row.getByRole('button', { name: 'Connect notes' }).click();
    const { authorizationUrl } = (await (await started).json()) as { authorizationUrl: string };
    const tab = await popup;
    await tab.waitForURL((u) => u.href.startsWith(as.issuer));
    await tab.close();
    // The user signs in at the provider, which redirects to Tollgate's callback.
    const callback = await authorizeInBrowser(authorizationUrl, 'ada', CALLBACK_PREFIX);
    // The browser lands on a page that says what happened (not the API's JSON)...
    const landing = await context.newPage();
    await landing.goto(`${p.adminUrl}${callback.pathname}${callback.search}`);
    expect(await landing.getByRole('heading', { level: 1 }).textContent()).toBe('Connected to notes');
    expect(await landing.locator('body').textContent()).not.toContain('"status"');
    await expectAccessible(landing, 'connection landing page');
    await landing.close();

    // ...and the console tab notices the connection by itself, without a reload or a click.
    await page.getByTestId('connect-done').getByText('Connected to notes').waitFor();
    expect(await row.getByTestId('connection-status').textContent()).toBe('Connected');
    await saveScreenshot(page, 'my-connections.png', { fullPage: true });
    await row.getByRole('button', { name: 'Disconnect notes' }).click();
    await expectConfirmDialog(page, 'Disconnect your notes account?');
    await page.getByTestId('confirm-disconnect').click();
    await expect
      .poll(() => row.getByTestId('connection-status').textContent(), { timeout: 15_000 })
      .toBe('Not connected');
    expect((await p.admin('GET', `/v1/orgs/${orgId}/users/${ids.ada}/connections`)).body).toEqual([]);
  }, 150_000); // long flows: on a busy two-core machine they outlast the default minute

  /** The error Mantine shows under an input (its `<id>-error` element, named by aria-describedby). */
  async function fieldError(page: Page, testId: string): Promise<string | null> {
    const input = page.getByTestId(testId);
    await eventually(() => input.getAttribute('aria-invalid')).toBe('true');
    return page.locator(`#${await input.getAttribute('id')}-error`).textContent();
  }

  /** The confirm dialog: named by its question, Cancel focused first, no serious axe violation. */
  async function expectConfirmDialog(page: Page, question: string): Promise<void> {
    const dialog = page.getByRole('dialog', { name: question });
    await dialog.waitFor();
    await eventually(() => page.evaluate('document.activeElement?.textContent')).toBe('Cancel');
    await expectAccessible(page, `confirm: ${question}`);
  }

  it('should register an upstream (refusals at the URL field, the secret never shown back), see its tools, edit it, disable, pause and delete it', async () => {
    // The key's org policy allows fx:* only: let it see the new namespace too.
    expect(
      (await p.admin('PATCH', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: { add: ['web:*'] } })).status,
    ).toBe(200);
    const page = await p.openConsole(tokens.admin, '/console/upstreams', { width: 1400, height: 1100 });
    await page.getByTestId('upstreams-table').waitFor();
    await page.getByTestId('register-upstream').click();
    await page.getByTestId('upstream-namespace').fill('web');
    await page.getByTestId('upstream-url').fill('not a url');
    await page.getByTestId('upstream-register-submit').click();
    expect(await fieldError(page, 'upstream-url')).toBe('url must be an http:// or https:// URL');
    // The outbound rule: 0.0.0.0 is outside the test's allowance (loopback only).
    await page.getByTestId('upstream-url').fill('http://0.0.0.0:9/mcp');
    await page.getByTestId('upstream-register-submit').click();
    await eventually(() => fieldError(page, 'upstream-url')).toContain('0.0.0.0 is an unspecified address');
    await expectAccessible(page, 'register upstream');

    await page.getByTestId('upstream-url').fill(fixture.url);
    expect(await page.getByText('0.0.0.0 is an unspecified address').count()).toBe(0); // typing takes it back
    await page.getByTestId('upstream-auth').click();
    await page.getByRole('option', { name: 'Static secret (bearer token)' }).click();
    await page.getByLabel('Bearer token').fill('web-secret-123');
    await page.getByTestId('upstream-register-submit').click();
    const row = page.locator('[data-testid=upstream-row][data-namespace=web]');
    await row.waitFor();
    // The page follows the first sync: the tools appear without a reload.
    const tools = page.getByTestId('tools-table').getByTestId('tool-row');
    await tools.filter({ hasText: 'web__ping' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Tools of web' }).count()).toBe(1);
    expect(await page.content()).not.toContain('web-secret-123');
    const registered = (await p.admin('GET', `/v1/orgs/${orgId}/upstreams`)).body.find(
      (u: { namespace: string }) => u.namespace === 'web',
    );
    expect(registered).toMatchObject({ authMode: 'STATIC_SECRET', headerNames: ['Authorization'], enabled: true });
    expect(JSON.stringify(registered)).not.toContain('web-secret-123');

    // Edit with If-Match: a change made elsewhere meanwhile is refused, then a fresh edit saves.
    await row.getByRole('button', { name: 'Edit web' }).click();
    expect(await page.getByLabel('New bearer token').inputValue()).toBe('');
    await page.getByLabel('Display name').fill('Web fixture');
    expect(
      (await p.admin('PATCH', `/v1/orgs/${orgId}/upstreams/${registered.id}`, { displayName: 'Someone else' })).status,
    ).toBe(200);
    await page.getByTestId('upstream-edit-save').click();
    await page.getByTestId('upstream-stale').waitFor();
    await expectAccessible(page, 'edit upstream, stale');
    await page.getByRole('button', { name: 'Reload upstreams' }).click();
    await row.getByText('Someone else').waitFor();
    await row.getByRole('button', { name: 'Edit web' }).click();
    await page.getByLabel('Display name').fill('Web fixture');
    await page.getByLabel('Sync every (seconds)').fill('600');
    await page.getByTestId('upstream-edit-save').click();
    await row.getByText('Web fixture').waitFor();
    const edited = (await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${registered.id}`)).body;
    expect(edited).toMatchObject({ displayName: 'Web fixture', syncIntervalSeconds: 600, callTimeoutMs: 30_000 });
    expect(edited.version).toBe(registered.version + 2);

    // Auth settings are editable: to per-user OAuth with a configured client (the static token goes with it)...
    await row.getByRole('button', { name: 'Edit web' }).click();
    await page.getByTestId('upstream-edit-auth').click();
    await page.getByRole('option', { name: /^Per-user OAuth/ }).click();
    expect(await page.getByTestId('upstream-edit-drops-secrets').textContent()).toContain('Authorization');
    await page.getByTestId('upstream-edit-client-id').fill('tollgate-web');
    await page.getByLabel('OAuth client secret').fill('web-client-secret-9');
    await page.getByTestId('upstream-edit-scope').fill('read');
    await expectAccessible(page, 'edit upstream auth');
    await page.getByTestId('upstream-edit-save').click();
    await expect
      .poll(async () => (await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${registered.id}`)).body.authMode)
      .toBe('PER_USER_OAUTH');
    const oauthed = (await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${registered.id}`)).body;
    expect(oauthed).toMatchObject({
      headerNames: [],
      oauth: { clientId: 'tollgate-web', registered: false, scope: 'read' },
    });
    expect(JSON.stringify(oauthed)).not.toContain('web-client-secret-9');
    // ...and back to the static secret, which the form then asks for. The form opens on the upstream as the
    // page lists it: wait for the list to have reloaded the saved one (the API may answer the test first).
    await row.getByText('auth: per-user OAuth').waitFor();
    await row.getByRole('button', { name: 'Edit web' }).click();
    expect(await page.getByTestId('upstream-edit-client-id').inputValue()).toBe('tollgate-web');
    await page.getByTestId('upstream-edit-auth').click();
    await page.getByRole('option', { name: 'Static secret (bearer token)' }).click();
    await page.getByTestId('upstream-edit-save').click();
    // The API's refusal, shown in the dialog once it answers.
    await page.getByRole('dialog').getByText('needs a bearerToken').waitFor();
    await page.getByLabel('Bearer token').fill('web-secret-123');
    await page.getByTestId('upstream-edit-save').click();
    await expect
      .poll(async () => (await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${registered.id}`)).body.authMode)
      .toBe('STATIC_SECRET');
    // Once saved the dialog closes; the page then holds the secret nowhere (while the dialog is open,
    // its own field still holds what was typed: the API can answer before the page has handled it).
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain('web-secret-123');

    // Disable: a connected agent hears list_changed and no longer lists the tools; calls are refused.
    const agent = await connectAgent(p.edgeUrl, adaSecret, 'ada-web');
    agents.push(agent);
    expect((await agent.listTools()).tools.map((t) => t.name)).toContain('web__ping');
    const gone = new Promise<void>((resolve) =>
      agent.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        if (!(await agent.listTools()).tools.some((t) => t.name.startsWith('web__'))) resolve();
      }),
    );
    await row.getByRole('button', { name: 'Disable web' }).click();
    await expectConfirmDialog(page, 'Disable the upstream web?');
    await page.getByTestId('confirm-disable-upstream').click();
    await gone;
    await row.getByText('Disabled').waitFor();
    const refused = (await agent.callTool({ name: 'web__ping', arguments: {} })) as CallToolResult;
    expect(toolError(refused)).toMatchObject({ code: 'UPSTREAM_DISABLED' });
    await row.getByRole('button', { name: 'Enable web' }).click();
    // The Disable button comes with the list reloaded after the change (the upstream's new version):
    // pausing before it would send the old version and be refused (412). A text match of "Enabled"
    // could be met before the enable was even answered.
    await row.getByRole('button', { name: 'Disable web' }).waitFor();
    await row.getByText('Enabled', { exact: true }).waitFor();

    await row.getByRole('button', { name: 'Pause sync of web' }).click();
    await row.getByTestId('sync-paused').waitFor();
    expect((await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${registered.id}`)).body.syncPaused).toBe(true);
    await row.getByRole('button', { name: 'Edit web' }).click();
    await page.getByTestId('upstream-unprefixed').check();
    await page.getByTestId('upstream-edit-save').click();
    await expect
      .poll(async () => (await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${registered.id}`)).body.exposeUnprefixed)
      .toBe(true);

    await row.getByRole('button', { name: 'Delete web' }).click();
    await expectConfirmDialog(page, 'Delete the upstream web?');
    expect(await page.getByRole('dialog').textContent()).toContain(
      'Spend already recorded stays in the reports under the name web',
    );
    await page.getByTestId('confirm-delete-upstream').click();
    await page.getByTestId('upstream-notice').getByText('web: deleted.').waitFor();
    await eventually(() => row.count()).toBe(0);
    const left = (await p.admin('GET', `/v1/orgs/${orgId}/upstreams`)).body as { namespace: string }[];
    expect(left.map((u) => u.namespace).sort()).toEqual(['fx', 'notes']);
  }, 150_000); // long flows: on a busy two-core machine they outlast the default minute

  it('should create a team budget (limit in exact micro-units), show its utilisation, refuse a duplicate, and delete it', async () => {
    const page = await p.openConsole(tokens.admin, '/console/budgets', { width: 1280, height: 1000 });
    await page.getByTestId('budgets-table').waitFor();
    await page.getByTestId('new-budget').click();
    await page.getByTestId('new-budget-target').click();
    await page.getByRole('option', { name: 'data', exact: true }).click();
    await page.getByTestId('new-budget-period').click();
    await page.getByRole('option', { name: 'Week' }).click();
    await page.getByTestId('new-budget-limit').fill('0.300001');
    await page.getByTestId('new-budget-mode').click();
    await page.getByRole('option', { name: 'Soft' }).click();
    await page.getByTestId('new-budget-thresholds').fill('50, 90');
    await expectAccessible(page, 'new budget');
    await page.getByTestId('new-budget-submit').click();
    const line = page.getByTestId('budget-line').filter({ hasText: 'Team data' });
    await line.getByTestId('budget-bar').waitFor();
    const budget = ((await p.admin('GET', `/v1/orgs/${orgId}/budgets`)).body as Record<string, unknown>[]).find(
      (b) => b.scope === 'TEAM',
    )!;
    expect(budget).toMatchObject({
      scopeId: ids.data,
      period: 'WEEK',
      limitMicros: 300_001,
      mode: 'SOFT',
      alertThresholds: [50, 90],
    });
    // The bar shows the API's own figure for the budget, to the micro-unit.
    const usage = ((await p.admin('GET', `/v1/orgs/${orgId}/reports/budgets`)).body as Record<string, string>[]).find(
      (u) => u.budgetId === budget.id,
    )!;
    expect(await line.getByTestId('budget-spent').getAttribute('data-micros')).toBe(
      String(BigInt(usage.spentMicros) + BigInt(usage.reservedMicros)),
    );
    expect(await line.textContent()).toContain('Soft');

    // PUT is an upsert: the form refuses to create over the existing weekly budget.
    await page.getByTestId('new-budget').click();
    await page.getByTestId('new-budget-target').click();
    await page.getByRole('option', { name: 'data', exact: true }).click();
    await page.getByTestId('new-budget-period').click();
    await page.getByRole('option', { name: 'Week' }).click();
    expect(await fieldError(page, 'new-budget-period')).toContain('already has a weekly budget');
    expect(await page.getByTestId('new-budget-submit').isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Cancel' }).click();

    await line.getByRole('button', { name: 'Delete budget of Team data, week' }).click();
    await expectConfirmDialog(page, 'Delete the weekly budget of Team data?');
    await page.getByTestId('confirm-delete-budget').click();
    await eventually(() => line.count()).toBe(0);
    expect(
      ((await p.admin('GET', `/v1/orgs/${orgId}/budgets`)).body as { scope: string }[]).map((b) => b.scope),
    ).toEqual(['ORG']);
  }, 150_000); // long flows: on a busy two-core machine they outlast the default minute

  it('should show finance no write control on the budgets and upstreams pages', async () => {
    const page = await p.openConsole(tokens.finance, '/console/budgets');
    await page.getByTestId('budgets-table').waitFor();
    expect(await page.getByTestId('new-budget').count()).toBe(0);
    expect(await page.getByRole('button', { name: /^(Edit|Delete) budget/ }).count()).toBe(0);
    await page.getByRole('link', { name: 'Upstreams and tools' }).click();
    await page.getByTestId('upstreams-table').waitFor();
    expect(await page.getByTestId('register-upstream').count()).toBe(0);
    expect(
      await page.getByRole('button', { name: /^(Edit|Disable|Enable|Delete|Sync now|Pause sync|Resume sync)/ }).count(),
    ).toBe(0);
  });
});
