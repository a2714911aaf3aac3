import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { QueueName } from '@tollgate/queue';
import {
  SERVER_EVERYTHING,
  callMeta,
  connectAgent,
  waitForJobs,
  waitForTrailSteps,
  waitForUsageEvents,
} from '@tollgate/testing';
import { readFile } from 'node:fs/promises';
import { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectAccessible, signInWithToken, saveScreenshot } from '../support/console-browser';
import { ConsolePlatform, startConsolePlatform } from '../support/console-platform';
import { SCRIPT_TIME_MS } from '../support/code-mode';

const SUM_PRICE = 50_000;

/**
 * The agent trail beside the call log, in a real browser: an org admin opens a progressive session
 * and a code-mode session and sees what each agent read and did, in order, with the totals the API
 * gives, the step that led to the call and the stubs the script was written against; exports JSON
 * lines equal to the API; a member of another user sees nothing of it.
 */
describe('console agent trail in a real browser', () => {
  let p: ConsolePlatform;
  let db: PrismaClient;
  let browser: Browser;
  let orgId: string;
  const sessions = { progressive: '', code: '' };
  const tokens = { admin: '', stranger: '' };
  const agents: Client[] = [];

  beforeAll(async () => {
    p = await startConsolePlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Trails', slug: 'trails' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'agents' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'ada@trails.test' })).body.id;
    const otherId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'bob@trails.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const upstream = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'everything',
      transport: 'STDIO',
      ...SERVER_EVERYTHING,
    });
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstream.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['everything:*'], deny: [] });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId: upstream.body.id,
      toolPattern: 'get-sum',
      perCallMicros: SUM_PRICE,
    });
    const key = async (name: string, disclosureMode: string) =>
      (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name, disclosureMode })).body.secret as string;
    const issue = (body: Record<string, unknown>) => p.issueToken({ orgId, ...body });
    tokens.admin = await issue({ role: 'ORG_ADMIN', name: 'admin' });
    tokens.stranger = await issue({ role: 'MEMBER', userId: otherId, name: 'bob' });

    const progressive = await connectAgent(p.edgeUrl, await key('planner', 'PROGRESSIVE'));
    agents.push(progressive);
    await progressive.callTool({ name: 'tollgate__search_tools', arguments: { query: 'add two numbers' } });
    await progressive.callTool({ name: 'tollgate__get_tool_schemas', arguments: { names: ['everything__get-sum'] } });
    const direct = await progressive.callTool({ name: 'everything__get-sum', arguments: { a: 1, b: 2 } });
    const coder = await connectAgent(p.edgeUrl, await key('coder', 'CODE'));
    agents.push(coder);
    await coder.callTool({ name: 'tollgate__read_files', arguments: { paths: ['servers/everything/get-sum.d.ts'] } });
    await coder.callTool({
      name: 'tollgate__run_script',
      arguments: { code: `return await everything.get_sum({ a: 3, b: 4 });`, timeoutMs: SCRIPT_TIME_MS },
    });
    sessions.progressive = (progressive.transport as { sessionId?: string }).sessionId!;
    sessions.code = (coder.transport as { sessionId?: string }).sessionId!;
    await waitForTrailSteps(p.env.redisUrl, p.env.redisPrefix, () => db.trailEvent.count({ where: { orgId } }), 5);
    // The call log's test needs the direct call's ledger row, which the worker may write in a later batch.
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callMeta(direct as CallToolResult)!.callId]);
    browser = await p.launchBrowser();
  });

  afterAll(async () => {
    await Promise.allSettled(agents.map((a) => a.close()));
    await db?.$disconnect();
    await p?.close();
  });

  it('should show a session’s search, schema read and call in order, with the API’s totals and the step that led to the call', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const keyPaths: URL[] = [];
    context.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname.includes('/keys')) keyPaths.push(url);
    });
    const page = await signInWithToken(
      context,
      p.adminUrl,
      tokens.admin,
      `/console/trail?sessionId=${encodeURIComponent(sessions.progressive)}`,
    );
    await page.getByTestId('trail-table').waitFor();
    const rows = page.getByTestId('trail-row');
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-kind')))).toEqual([
      'SEARCH',
      'SCHEMAS',
      'CALL',
    ]);
    const api = (await p.admin('GET', `/v1/orgs/${orgId}/trail?sessionId=${encodeURIComponent(sessions.progressive)}`))
      .body;
    const s = api.summary;
    expect(await page.getByTestId('trail-totals').textContent()).toBe(
      `${s.steps} steps: discovery ${s.discoveryTokens.toLocaleString('en-US')} tokens, calls ${s.callTokens.toLocaleString('en-US')} tokens, cost $0.05`,
    );
    expect(await rows.nth(0).textContent()).toContain('“add two numbers” → everything__get-sum');
    expect(await page.getByTestId('trail-led-by').textContent()).toBe('after schemas read');
    // The steps' key is named by a lookup of the ids on the page, not from every key of the org.
    await eventually(() => rows.nth(0).textContent()).toContain('planner');
    expect(keyPaths.filter((u) => u.pathname.endsWith('/keys'))).toEqual([]);
    expect(keyPaths.filter((u) => u.searchParams.has('ids')).length).toBe(1);
    await expectAccessible(page, 'agent trail');
    await saveScreenshot(page, 'agent-trail.png', { fullPage: true });

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('trail-export').click()]);
    const lines = (await readFile((await download.path())!, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual(api.steps);
    await context.close();
  });

  it('should open a call’s session trail from its row in the call log', async () => {
    const page = await p.openConsole(tokens.admin, '/console/calls');
    await page.getByTestId('call-row').first().waitFor();
    // The direct call links to its session; the script's inner call is the script's step, not a session call.
    const links = page.getByTestId('call-row-trail');
    expect(await links.count()).toBe(1);
    expect(await links.getAttribute('href')).toBe(
      `/console/trail?sessionId=${encodeURIComponent(sessions.progressive)}`,
    );
    await links.click();
    await page.getByTestId('trail-table').waitFor();
    expect(new URL(page.url()).searchParams.get('sessionId')).toBe(sessions.progressive);
    const rows = page.getByTestId('trail-row');
    await eventually(() => rows.count()).toBe(3);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-kind')))).toEqual([
      'SEARCH',
      'SCHEMAS',
      'CALL',
    ]);
  });

  it('should show a script’s inner calls by line and the stubs it was written against', async () => {
    const page = await p.openConsole(
      tokens.admin,
      `/console/trail?sessionId=${encodeURIComponent(sessions.code)}&kind=SCRIPT`,
    );
    await page.getByTestId('trail-table').waitFor();
    expect(await page.getByTestId('trail-script-call').textContent()).toBe('line 1: everything__get-sum');
    expect(await page.getByTestId('trail-read-before').textContent()).toBe(
      'written against servers/everything/get-sum.d.ts',
    );
  });

  it('should show a member of another user no step', async () => {
    const page = await p.openConsole(tokens.stranger, '/console/trail', { width: 390, height: 844 });
    await page.getByTestId('empty-state').waitFor();
    expect(await page.getByTestId('trail-row').count()).toBe(0);
    await expectAccessible(page, 'agent trail at 390 px');
  });
});
