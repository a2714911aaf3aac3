import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PrismaClient } from '@prisma/client';
import { PrismaPg } from '@prisma/adapter-pg';
import { QueueName } from '@tollgate/queue';
import { TestClock, callMeta, connectAgent, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { REDIRECT_URL, TestOAuthProvider, connectByOAuth, freePort } from '../support/oauth-test-client';
import { RunningPlatform, startPlatform } from '../support/platform';

const PRICE = 1_000;
const today = () => new Date().toISOString().slice(0, 10);

/** Signs in with a sign-in code and consents, following redirects by hand (as the OAuth e2e does). */
class CodeBrowser {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly person: { email: string; code: string }) {}

  private async request(url: URL, form?: Record<string, string>): Promise<Response> {
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      this.cookies.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return res;
  }

  async authorize(start: URL): Promise<URL> {
    let url = start;
    let res = await this.request(url);
    for (let hop = 0; hop < 20; hop++) {
      const location = res.headers.get('location');
      if (location) {
        url = new URL(location, url);
        if (url.href.startsWith(REDIRECT_URL)) return url;
        res = await this.request(url);
        continue;
      }
      const html = await res.text();
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
      const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
      if (!csrf || !action) throw new Error(`no form at ${url.pathname} (${res.status})`);
      const target = new URL(action, url);
      const teamId = /name="teamId" value="([^"]+)"/.exec(html)?.[1] ?? /<option value="([^"]+)"/.exec(html)?.[1] ?? '';
      res = html.includes('name="code"')
        ? await this.request(target, { csrf, method: 'code', email: this.person.email, code: this.person.code })
        : await this.request(target, { csrf, teamId, decision: 'allow' });
      url = target;
    }
    throw new Error('too many steps');
  }
}

/** Polls `refused` until it holds (expect.poll's bound only limits the wait). */
async function until(refused: () => Promise<boolean>): Promise<void> {
  await expect.poll(refused).toBe(true);
}

/** A bare tools/list at the edge with a bearer credential: its HTTP status and body. */
async function edgeList(edgeUrl: string, bearer: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${edgeUrl}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${bearer}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

interface OrgFixture {
  orgId: string;
  teamId: string;
  userId: string;
  upstreamId: string;
}

/** Day-2 administration of organisations, people, keys, admin tokens and reports, through the admin API and the edge. */
describe('day-2: organisations, people, keys, admin tokens, reports', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let fixture: FixtureServer;
  const agents: Client[] = [];
  // The edge's time. Stopped around a change the edge must hear of at once (a revoked key, a
  // disabled org): its credential cache (60 s) cannot run out meanwhile, so an answer that changes
  // is the change's event reaching the edge, not the cache expiring, and no wall-clock margin is needed.
  const edgeClock = new TestClock();
  // The admin API's time: a token's expiry passes when the test moves it.
  const adminClock = new TestClock();
  async function withEdgeClockStopped(fn: () => Promise<void>): Promise<void> {
    edgeClock.freeze();
    try {
      await fn();
    } finally {
      // Back on the admin API's time (a price rule made now is in force, a call is on today).
      edgeClock.resume();
      edgeClock.advance(Date.now() - edgeClock.now());
    }
  }

  const agent = async (secret: string) => {
    const a = await connectAgent(p.edgeUrl, secret);
    agents.push(a);
    return a;
  };
  const ping = async (a: Client) => (await a.callTool({ name: 'fx__ping', arguments: {} })) as CallToolResult;

  /** An organisation with a team, a user in it, the fixture upstream synced, everything allowed and priced. */
  async function setupOrg(slug: string, email: string): Promise<OrgFixture> {
    const orgId = (await p.admin('POST', '/v1/orgs', { name: slug.toUpperCase(), slug })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'platform' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email, name: `${slug} person` })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'fx',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fx:*'], deny: [] });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, { upstreamId, toolPattern: '*', perCallMicros: PRICE });
    return { orgId, teamId, userId, upstreamId };
  }

  beforeAll(async () => {
    const [adminPort, edgePort] = [await freePort(), await freePort()];
    p = await startPlatform(
      {
        ADMIN_PORT: String(adminPort),
        EDGE_PORT: String(edgePort),
        ADMIN_PUBLIC_URL: `http://127.0.0.1:${adminPort}`,
        EDGE_PUBLIC_URL: `http://127.0.0.1:${edgePort}`,
        OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32',
      },
      { clock: edgeClock, adminClock },
    );
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startFixtureServer();
  });

  afterAll(async () => {
    await Promise.allSettled(agents.map((a) => a.close()));
    await db?.$disconnect();
    await p?.close();
    await fixture?.close();
  });

  it('should offboard a user in one call, refusing their key, OAuth token and admin token at once, and keep their spend', async () => {
    const o = await setupOrg('acme', 'ada@acme.test');
    const keySecret = (
      await p.admin('POST', `/v1/orgs/${o.orgId}/keys`, { teamId: o.teamId, userId: o.userId, name: 'laptop' })
    ).body.secret as string;
    const adminToken = (
      await p.admin('POST', '/v1/admin-tokens', { role: 'MEMBER', orgId: o.orgId, userId: o.userId, name: 'ada-cli' })
    ).body.secret as string;
    const budget = await p.admin('PUT', `/v1/orgs/${o.orgId}/budgets`, {
      scope: 'USER',
      scopeId: o.userId,
      period: 'MONTH',
      limitMicros: 1_000_000,
    });
    expect(budget.status).toBe(200);
    // A per-user upstream connection (its tokens are opaque to this test).
    await db.userConnection.create({
      data: { orgId: o.orgId, userId: o.userId, upstreamId: o.upstreamId, tokensEnc: 'v1:test', encKeyId: 'test' },
    });
    // The OAuth way in: the SDK's OAuth client, signing in with a code.
    const code = (await p.admin('POST', `/v1/orgs/${o.orgId}/users/${o.userId}/sign-in-codes`, {})).body.code as string;
    const oauth = new TestOAuthProvider(new CodeBrowser({ email: 'ada@acme.test', code }));
    const oauthAgent = await connectByOAuth(p.edgeUrl, oauth);
    agents.push(oauthAgent);
    const accessToken = oauth.saved!.access_token;

    const paid = await ping(await agent(keySecret));
    expect(paid.isError).toBeFalsy();
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callMeta(paid)!.callId]);
    await withEdgeClockStopped(async () => {
      // Cached by the edge now, on a clock that does not move until the checks below are done.
      expect((await edgeList(p.edgeUrl, keySecret)).status).toBe(200);
      expect((await edgeList(p.edgeUrl, accessToken)).status).toBe(200);
      expect((await p.admin('GET', `/v1/orgs/${o.orgId}/keys`, undefined, adminToken)).status).toBe(200);

      const res = await p.admin('POST', `/v1/orgs/${o.orgId}/users/${o.userId}/offboard`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.revokedKeyIds).toHaveLength(2);
      expect(res.body.revokedAdminTokenIds).toHaveLength(1);
      expect(res.body.removedFromTeamIds).toEqual([o.teamId]);
      expect(res.body.disconnectedUpstreamIds).toEqual([o.upstreamId]);

      // The admin API reads its tokens on every request: refused on the first one after the answer.
      expect((await p.admin('GET', `/v1/orgs/${o.orgId}/keys`, undefined, adminToken)).status).toBe(401);
      await until(async () => (await edgeList(p.edgeUrl, keySecret)).status === 401);
      await until(async () => (await edgeList(p.edgeUrl, accessToken)).status === 401);
    });
    expect(await db.userConnection.count({ where: { userId: o.userId } })).toBe(0);

    // No new way in; their budget and past spend stay for the books.
    const again = await p.admin('POST', `/v1/orgs/${o.orgId}/keys`, {
      teamId: o.teamId,
      userId: o.userId,
      name: 'again',
    });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('USER_OFFBOARDED');
    expect(
      (await p.admin('GET', `/v1/orgs/${o.orgId}/budgets`)).body.map((b: { scopeId: string }) => b.scopeId),
    ).toContain(o.userId);
    const report = await p.admin('GET', `/v1/orgs/${o.orgId}/reports/spend?from=${today()}&to=${today()}&groupBy=user`);
    expect(report.body.rows).toEqual([
      expect.objectContaining({ userId: o.userId, userEmail: 'ada@acme.test', costMicros: PRICE }),
    ]);
    expect((await p.admin('GET', `/v1/orgs/${o.orgId}/users/${o.userId}`)).body.offboardedAt).not.toBeNull();
    // Offboarding twice is harmless.
    expect((await p.admin('POST', `/v1/orgs/${o.orgId}/users/${o.userId}/offboard`)).body.revokedKeyIds).toEqual([]);
  });

  it('should refuse a disabled organisation’s keys with ORG_DISABLED at once, and delete it only once disabled, keeping the ledger', async () => {
    const o = await setupOrg('globex', 'gus@globex.test');
    const keySecret = (
      await p.admin('POST', `/v1/orgs/${o.orgId}/keys`, { teamId: o.teamId, userId: o.userId, name: 'k' })
    ).body.secret as string;
    const orgAdmin = (
      await p.admin('POST', '/v1/admin-tokens', { role: 'ORG_ADMIN', orgId: o.orgId, name: 'globex-admin' })
    ).body.secret as string;
    const a = await agent(keySecret);
    const paid = await ping(a);
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callMeta(paid)!.callId]);

    expect((await p.admin('DELETE', `/v1/orgs/${o.orgId}?data=keep`)).body.code).toBe('ORG_NOT_DISABLED');
    expect((await p.admin('POST', `/v1/orgs/${o.orgId}/disable`, undefined, orgAdmin)).status).toBe(403);
    await withEdgeClockStopped(async () => {
      expect((await edgeList(p.edgeUrl, keySecret)).status).toBe(200);
      expect((await p.admin('POST', `/v1/orgs/${o.orgId}/disable`)).status).toBe(200);
      await until(async () => (await edgeList(p.edgeUrl, keySecret)).status === 403);
      const refused = await edgeList(p.edgeUrl, keySecret);
      expect(refused.body.error.data.code).toBe('ORG_DISABLED');
      // The connected session is refused too.
      await expect(ping(a)).rejects.toThrow();

      expect((await p.admin('POST', `/v1/orgs/${o.orgId}/enable`)).status).toBe(200);
      await until(async () => (await edgeList(p.edgeUrl, keySecret)).status === 200);
    });
    await p.admin('POST', `/v1/orgs/${o.orgId}/disable`);

    expect((await p.admin('DELETE', `/v1/orgs/${o.orgId}`)).body.field).toBe('data');
    const deleted = await p.admin('DELETE', `/v1/orgs/${o.orgId}?data=purge`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect((await p.admin('GET', `/v1/orgs/${o.orgId}`)).status).toBe(404);
    expect(await db.team.count({ where: { orgId: o.orgId } })).toBe(0);
    expect(await db.usageEvent.count({ where: { orgId: o.orgId } })).toBe(1);
    // Finance still sees the purged org's spend, under its name.
    const platform = await p.admin('GET', `/v1/reports/spend?from=${today()}&to=${today()}`);
    expect(platform.status).toBe(200);
    expect(platform.body.rows).toEqual(
      expect.arrayContaining([expect.objectContaining({ orgId: o.orgId, orgName: 'GLOBEX', costMicros: PRICE })]),
    );
    expect((await p.admin('GET', `/v1/reports/spend?from=${today()}&to=${today()}`, undefined, orgAdmin)).status).toBe(
      401,
    );
  });

  it('should keep the running budget period when the time zone changes and show report days in the new zone', async () => {
    const o = await setupOrg('initech', 'ivy@initech.test');
    const keySecret = (
      await p.admin('POST', `/v1/orgs/${o.orgId}/keys`, { teamId: o.teamId, userId: o.userId, name: 'k' })
    ).body.secret as string;
    await p.admin('PUT', `/v1/orgs/${o.orgId}/budgets`, {
      scope: 'ORG',
      scopeId: o.orgId,
      period: 'DAY',
      limitMicros: 1_000_000,
    });
    const a = await agent(keySecret);
    await ping(a);
    const dayBudget = async () => (await p.admin('GET', `/v1/orgs/${o.orgId}/reports/budgets`)).body[0];
    const before = await dayBudget();
    expect(before.spentMicros).toBe(PRICE);

    expect((await p.admin('PATCH', `/v1/orgs/${o.orgId}`, { timeZone: 'UTC+2' })).body.field).toBe('timeZone');
    const patched = await p.admin('PATCH', `/v1/orgs/${o.orgId}`, {
      timeZone: 'Pacific/Kiritimati',
      name: 'Initech Ltd',
      autoApproveTools: false,
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({
      timeZone: 'Pacific/Kiritimati',
      previousTimeZone: 'UTC',
      name: 'Initech Ltd',
      autoApproveTools: false,
    });

    // The running day keeps its UTC bounds and its spend; the edge (its cache dropped) charges the same counter.
    const after = await dayBudget();
    expect({ periodStart: after.periodStart, resetsAt: after.resetsAt }).toEqual({
      periodStart: before.periodStart,
      resetsAt: before.resetsAt,
    });
    const second = await ping(a);
    expect(second.isError).toBeFalsy();
    expect((await dayBudget()).spentMicros).toBe(2 * PRICE);
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callMeta(second)!.callId]);
    const kiritimatiToday = new Intl.DateTimeFormat('en-CA', { timeZone: 'Pacific/Kiritimati' }).format(new Date());
    const report = await p.admin(
      'GET',
      `/v1/orgs/${o.orgId}/reports/spend?from=${kiritimatiToday}&to=${kiritimatiToday}&groupBy=day`,
    );
    expect(report.body.timeZone).toBe('Pacific/Kiritimati');
    expect(report.body.totals.calls).toBe(2);
    expect(report.body.rows).toEqual([expect.objectContaining({ day: kiritimatiToday, calls: 2 })]);

    const audit = (await p.admin('GET', `/v1/orgs/${o.orgId}/audit`)).body;
    expect(audit.find((e: { action: string }) => e.action === 'org.updated').details.timeZone).toEqual({
      from: 'UTC',
      to: 'Pacific/Kiritimati',
    });
  });

  it('should change a key’s name, tags, metadata and disclosure mode (seen by the next session) and report spend by tag', async () => {
    const o = await setupOrg('hooli', 'hal@hooli.test');
    const atlas = (
      await p.admin('POST', `/v1/orgs/${o.orgId}/keys`, {
        teamId: o.teamId,
        userId: o.userId,
        name: 'a',
        disclosureMode: 'FULL',
      })
    ).body;
    const zeus = (
      await p.admin('POST', `/v1/orgs/${o.orgId}/keys`, {
        teamId: o.teamId,
        userId: o.userId,
        name: 'z',
        tags: ['project:zeus'],
      })
    ).body;
    const names = async (secret: string) => (await (await agent(secret)).listTools()).tools.map((t) => t.name);
    expect(await names(atlas.secret)).not.toContain('tollgate__search_tools');

    const patched = await p.admin('PATCH', `/v1/orgs/${o.orgId}/keys/${atlas.key.id}`, {
      name: 'atlas-agent',
      tags: ['project:atlas', 'env:prod'],
      metadata: { costCentre: 'CC-42' },
      disclosureMode: 'PROGRESSIVE',
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'atlas-agent',
      tags: ['project:atlas', 'env:prod'],
      metadata: { costCentre: 'CC-42' },
      disclosureMode: 'PROGRESSIVE',
    });
    expect(await names(atlas.secret)).toContain('tollgate__search_tools');

    for (const [body, field] of [
      [{ tags: ['has space'] }, 'tags'],
      [{ tags: 'x' }, 'tags'],
      [{ metadata: { big: 'x'.repeat(5000) } }, 'metadata'],
      [{ metadata: [1] }, 'metadata'],
      [{ disclosureMode: 'LOUD' }, 'disclosureMode'],
      [{ expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt'],
    ] as const) {
      const bad = await p.admin('PATCH', `/v1/orgs/${o.orgId}/keys/${atlas.key.id}`, body);
      expect({ status: bad.status, field: bad.body.field }).toEqual({ status: 400, field });
    }

    const ids = [];
    for (const secret of [atlas.secret, atlas.secret, zeus.secret])
      ids.push(callMeta(await ping(await agent(secret)))!.callId);
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, ids);
    const byTag = await p.admin('GET', `/v1/orgs/${o.orgId}/reports/spend?from=${today()}&to=${today()}&groupBy=tag`);
    expect(byTag.body.rows).toEqual([
      expect.objectContaining({ tag: 'env:prod', costMicros: 2 * PRICE }),
      expect.objectContaining({ tag: 'project:atlas', costMicros: 2 * PRICE }),
      expect.objectContaining({ tag: 'project:zeus', costMicros: PRICE }),
    ]);
    // Each call once in the totals, though atlas's calls are in two rows.
    expect(byTag.body.totals.costMicros).toBe(3 * PRICE);
    const atlasOnly = await p.admin(
      'GET',
      `/v1/orgs/${o.orgId}/reports/spend?from=${today()}&to=${today()}&groupBy=key&tag=project:atlas`,
    );
    expect(atlasOnly.body.rows).toEqual([
      expect.objectContaining({ keyId: atlas.key.id, keyName: 'atlas-agent', calls: 2 }),
    ]);
    expect(
      (await p.admin('GET', `/v1/orgs/${o.orgId}/reports/spend?from=${today()}&to=${today()}&tag=bad tag`)).body.field,
    ).toBe('tag');
  });

  it('should let a team admin set limits on the team’s keys only within the team’s', async () => {
    const o = await setupOrg('umbrella', 'uma@umbrella.test');
    const other = (await p.admin('POST', `/v1/orgs/${o.orgId}/teams`, { name: 'other' })).body.id;
    const boss = (await p.admin('POST', `/v1/orgs/${o.orgId}/users`, { email: 'boss@umbrella.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${o.orgId}/teams/${o.teamId}/members`, { userId: boss, isTeamAdmin: true });
    await p.admin('POST', `/v1/orgs/${o.orgId}/teams/${other}/members`, { userId: o.userId });
    const teamAdmin = (
      await p.admin('POST', '/v1/admin-tokens', {
        role: 'TEAM_ADMIN',
        orgId: o.orgId,
        teamId: o.teamId,
        userId: boss,
        name: 'boss',
      })
    ).body.secret as string;
    const key = (await p.admin('POST', `/v1/orgs/${o.orgId}/keys`, { teamId: o.teamId, userId: o.userId, name: 'k' }))
      .body.key;
    const otherKey = (await p.admin('POST', `/v1/orgs/${o.orgId}/keys`, { teamId: other, userId: o.userId, name: 'o' }))
      .body.key;
    await p.admin('PUT', `/v1/orgs/${o.orgId}/budgets`, {
      scope: 'TEAM',
      scopeId: o.teamId,
      period: 'MONTH',
      limitMicros: 10_000_000,
    });
    await p.admin('POST', `/v1/orgs/${o.orgId}/rate-limits`, {
      scope: 'TEAM',
      scopeId: o.teamId,
      callsPerWindow: 10,
      windowSeconds: 60,
    });

    const above = await p.admin(
      'PUT',
      `/v1/orgs/${o.orgId}/keys/${key.id}/budget`,
      { period: 'MONTH', limitMicros: 20_000_000 },
      teamAdmin,
    );
    expect(above.status).toBe(403);
    expect(above.body.message).toContain('limitMicros');
    expect(
      (
        await p.admin(
          'PUT',
          `/v1/orgs/${o.orgId}/keys/${key.id}/budget`,
          { period: 'MONTH', limitMicros: 5_000_000 },
          teamAdmin,
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await p.admin(
          'POST',
          `/v1/orgs/${o.orgId}/keys/${key.id}/rate-limits`,
          { callsPerWindow: 20, windowSeconds: 60 },
          teamAdmin,
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await p.admin(
          'POST',
          `/v1/orgs/${o.orgId}/keys/${key.id}/rate-limits`,
          { callsPerWindow: 5, windowSeconds: 60 },
          teamAdmin,
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await p.admin(
          'PUT',
          `/v1/orgs/${o.orgId}/keys/${otherKey.id}/budget`,
          { period: 'MONTH', limitMicros: 1 },
          teamAdmin,
        )
      ).status,
    ).toBe(404);
    const limits = (await p.admin('GET', `/v1/orgs/${o.orgId}/keys/${key.id}/limits`, undefined, teamAdmin)).body;
    expect(limits.budgets).toEqual([
      expect.objectContaining({ scope: 'KEY', period: 'MONTH', limitMicros: 5_000_000 }),
    ]);
    expect(limits.rateLimits).toEqual([expect.objectContaining({ callsPerWindow: 5 })]);
    // The org admin is not held to the team's figures.
    expect(
      (await p.admin('PUT', `/v1/orgs/${o.orgId}/keys/${key.id}/budget`, { period: 'MONTH', limitMicros: 20_000_000 }))
        .status,
    ).toBe(200);

    // Demoting the team admin revokes its TEAM_ADMIN token at once.
    expect(
      (await p.admin('PATCH', `/v1/orgs/${o.orgId}/teams/${o.teamId}/members/${boss}`, { isTeamAdmin: false })).body
        .isTeamAdmin,
    ).toBe(false);
    expect((await p.admin('GET', `/v1/orgs/${o.orgId}/keys`, undefined, teamAdmin)).status).toBe(401);
  });

  it('should rename teams and users, move a user with their keys and remove a member', async () => {
    const o = await setupOrg('stark', 'tony@stark.test');
    const labs = (await p.admin('POST', `/v1/orgs/${o.orgId}/teams`, { name: 'labs' })).body.id;
    const key = (await p.admin('POST', `/v1/orgs/${o.orgId}/keys`, { teamId: o.teamId, userId: o.userId, name: 'k' }))
      .body;
    const a = await agent(key.secret);
    await ping(a);

    expect((await p.admin('PATCH', `/v1/orgs/${o.orgId}/teams/${o.teamId}`, { name: 'platform-eng' })).body.name).toBe(
      'platform-eng',
    );
    expect((await p.admin('PATCH', `/v1/orgs/${o.orgId}/teams/${o.teamId}`, { name: 'labs' })).status).toBe(409);
    expect((await p.admin('PATCH', `/v1/orgs/${o.orgId}/teams/${o.teamId}`, { name: '' })).body.field).toBe('name');
    expect((await p.admin('PATCH', `/v1/orgs/${o.orgId}/users/${o.userId}`, { name: 'Tony S.' })).body.name).toBe(
      'Tony S.',
    );
    expect((await p.admin('PATCH', `/v1/orgs/${o.orgId}/users/${o.userId}`, { email: 'nope' })).body.field).toBe(
      'email',
    );

    const moved = await p.admin('POST', `/v1/orgs/${o.orgId}/users/${o.userId}/move`, {
      fromTeamId: o.teamId,
      toTeamId: labs,
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.movedKeyIds).toEqual([key.key.id]);
    expect((await p.admin('GET', `/v1/orgs/${o.orgId}/keys/${key.key.id}`)).body.teamId).toBe(labs);
    // The next call spends for the new team.
    const call = await ping(a);
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callMeta(call)!.callId]);
    expect((await db.usageEvent.findFirst({ where: { id: callMeta(call)!.callId } }))?.teamId).toBe(labs);
    expect(
      (await p.admin('GET', `/v1/orgs/${o.orgId}/teams/${labs}/members`)).body.map((m: { userId: string }) => m.userId),
    ).toEqual([o.userId]);

    await withEdgeClockStopped(async () => {
      expect((await edgeList(p.edgeUrl, key.secret)).status).toBe(200);
      const removed = await p.admin('DELETE', `/v1/orgs/${o.orgId}/teams/${labs}/members/${o.userId}`);
      expect(removed.body.revokedKeyIds).toEqual([key.key.id]);
      await until(async () => (await edgeList(p.edgeUrl, key.secret)).status === 401);
    });
    expect((await p.admin('DELETE', `/v1/orgs/${o.orgId}/teams/${labs}/members/${o.userId}`)).status).toBe(404);
  });

  it('should list, expire and revoke admin tokens with their owners, and name the person in the audit trail', async () => {
    const o = await setupOrg('wayne', 'bruce@wayne.test');
    const alfred = (
      await p.admin('POST', `/v1/orgs/${o.orgId}/users`, { email: 'alfred@wayne.test', name: 'Alfred Pennyworth' })
    ).body.id;
    const personal = await p.admin('POST', '/v1/admin-tokens', {
      role: 'ORG_ADMIN',
      orgId: o.orgId,
      userId: alfred,
      name: 'alfred-laptop',
    });
    const ci = await p.admin('POST', '/v1/admin-tokens', {
      role: 'FINANCE',
      orgId: o.orgId,
      name: 'ci',
      ownerLabel: 'billing pipeline',
      expiresAt: '2099-01-01T00:00:00Z',
    });
    expect(ci.body.expiresAt).toBe('2099-01-01T00:00:00.000Z');
    // Alfred makes a change with his token.
    expect(
      (await p.admin('PATCH', `/v1/orgs/${o.orgId}/teams/${o.teamId}`, { name: 'gotham' }, personal.body.secret))
        .status,
    ).toBe(200);

    const list = await p.admin('GET', '/v1/admin-tokens', undefined, personal.body.secret);
    expect(list.status).toBe(200);
    const mine = list.body.find((t: { id: string }) => t.id === personal.body.id);
    expect(mine).toMatchObject({
      role: 'ORG_ADMIN',
      owner: { id: alfred, name: 'Alfred Pennyworth', email: 'alfred@wayne.test' },
      revokedAt: null,
    });
    // The last use is written off the request's path (at most once a minute): wait for it.
    await expect
      .poll(
        async () =>
          (await p.admin('GET', '/v1/admin-tokens', undefined, personal.body.secret)).body.find(
            (t: { id: string }) => t.id === personal.body.id,
          ).lastUsedAt,
        { timeout: 15_000 },
      )
      .not.toBeNull();
    expect(list.body.find((t: { id: string }) => t.id === ci.body.id)).toMatchObject({
      role: 'FINANCE',
      owner: null,
      ownerLabel: 'billing pipeline',
    });
    expect(JSON.stringify(list.body)).not.toContain(personal.body.secret);
    expect(list.body.every((t: { orgId: string }) => t.orgId === o.orgId)).toBe(true);

    const audit = (await p.admin('GET', `/v1/orgs/${o.orgId}/audit`)).body;
    expect(audit.find((e: { action: string }) => e.action === 'team.updated').actor).toMatchObject({
      tokenId: personal.body.id,
      tokenName: 'alfred-laptop',
      role: 'ORG_ADMIN',
      user: { id: alfred, name: 'Alfred Pennyworth', email: 'alfred@wayne.test' },
    });

    // Expiry: a token set to expire shortly stops at that time (the admin API's clock moved to it).
    const soon = new Date(adminClock.now() + 60_000).toISOString();
    expect(
      (await p.admin('PATCH', `/v1/admin-tokens/${ci.body.id}`, { expiresAt: soon }, personal.body.secret)).body
        .expiresAt,
    ).toBe(soon);
    adminClock.advance(59_000);
    expect((await p.admin('GET', `/v1/orgs/${o.orgId}/audit`, undefined, ci.body.secret)).status).toBe(200);
    adminClock.advance(1_000);
    expect((await p.admin('GET', `/v1/orgs/${o.orgId}/audit`, undefined, ci.body.secret)).status).toBe(401);
    expect(
      (await p.admin('PATCH', `/v1/admin-tokens/${ci.body.id}`, { expiresAt: '2001-01-01T00:00:00Z' })).body.field,
    ).toBe('expiresAt');

    // Another org's admin sees none of these; finance may not manage tokens.
    const other = (await p.admin('POST', '/v1/orgs', { name: 'Other', slug: 'other-wayne' })).body.id;
    const otherAdmin = (await p.admin('POST', '/v1/admin-tokens', { role: 'ORG_ADMIN', orgId: other, name: 'x' })).body
      .secret;
    expect((await p.admin('DELETE', `/v1/admin-tokens/${personal.body.id}`, undefined, otherAdmin)).status).toBe(404);
    expect((await p.admin('GET', `/v1/admin-tokens?orgId=${o.orgId}`, undefined, otherAdmin)).status).toBe(404);
    const finance = (await p.admin('POST', '/v1/admin-tokens', { role: 'FINANCE', orgId: o.orgId, name: 'f' })).body
      .secret;
    expect((await p.admin('GET', '/v1/admin-tokens', undefined, finance)).status).toBe(403);

    // Revoked: refused from the next request on.
    const revoked = await p.admin('DELETE', `/v1/admin-tokens/${personal.body.id}`);
    expect(revoked.body.revokedAt).not.toBeNull();
    expect((await p.admin('GET', `/v1/orgs/${o.orgId}`, undefined, personal.body.secret)).status).toBe(401);
    const trail = (await p.admin('GET', `/v1/orgs/${o.orgId}/audit`)).body;
    expect(trail.find((e: { action: string }) => e.action === 'admin-token.revoked').actor).toMatchObject({
      tokenId: 'bootstrap',
      role: 'PLATFORM_ADMIN',
    });
  });
});
