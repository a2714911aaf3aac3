import { BaseConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { LedgerService, UsageEvent } from '@tollgate/usage';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';

const DAY_MS = 24 * 3600 * 1000;
const utcDay = (offsetDays = 0) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);

/**
 * Spend reports and budget utilisation by role, through the admin API: finance and org admins see
 * the org, a team admin only its team's calls and budgets, a member only their own. Ledger rows
 * are written by the production ledger writer (its insert trigger keeps the rollups reports read).
 */
describe('spend reports scoped by role', () => {
  let p: RunningPlatform;
  let prisma: PrismaService;
  let orgId: string;
  const ids = { data: '', web: '', ada: '', cy: '', bob: '', dee: '', keyAda: '', keyCy: '', keyBob: '', keyDee: '' };
  const tokens = { finance: '', orgAdmin: '', teamAdmin: '', webAdmin: '', member: '' };
  const upstreams = [randomUUID(), randomUUID()];
  const from = utcDay(-2);
  const to = utcDay(1);

  const spend = (query: string, token: string) =>
    p.admin('GET', `/v1/orgs/${orgId}/reports/spend?from=${from}&to=${to}&${query}`, undefined, token);

  /** The ledger's own sums for the calls matching `where` (SQL over the rows, not the report's code). */
  async function ledgerSums(where: { teamId?: string; userId?: string; toolName?: string } = {}) {
    const rows = await prisma.usageEvent.findMany({ where: { orgId, ...where } });
    return {
      calls: rows.length,
      errors: rows.filter((r) => r.outcome !== 'OK').length,
      outputTokens: rows.reduce((s, r) => s + r.outputTokens, 0),
      costMicros: Number(rows.reduce((s, r) => s + r.costMicros, 0n)),
    };
  }

  async function issueToken(body: Record<string, unknown>): Promise<string> {
    const res = await p.admin('POST', '/v1/admin-tokens', { orgId, ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.secret;
  }

  beforeAll(async () => {
    p = await startPlatform();
    prisma = new PrismaService({ db: { url: p.env.vars.DATABASE_URL } } as BaseConfig);
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Scoped', slug: 'scoped' })).body.id;
    ids.data = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'data' })).body.id;
    ids.web = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'web' })).body.id;
    for (const [name, team] of [
      ['ada', ids.data],
      ['cy', ids.data],
      ['bob', ids.web],
    ] as const) {
      const user = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: `${name}@scoped.test` })).body.id;
      ids[name] = user;
      expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${team}/members`, { userId: user })).status).toBe(201);
      const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId: team, userId: user, name: `${name}-key` });
      expect(key.status, JSON.stringify(key.body)).toBe(201);
      ids[`key${name[0].toUpperCase()}${name.slice(1)}` as 'keyAda'] = key.body.key.id;
    }
    // dee is in both teams but calls only with a web key: her USER budget counts those calls.
    ids.dee = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'dee@scoped.test' })).body.id;
    for (const team of [ids.data, ids.web])
      expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${team}/members`, { userId: ids.dee })).status).toBe(201);
    const deeKey = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
      teamId: ids.web,
      userId: ids.dee,
      name: 'dee-key',
    });
    expect(deeKey.status, JSON.stringify(deeKey.body)).toBe(201);
    ids.keyDee = deeKey.body.key.id;
    const calls: [string, string, string, string][] = [
      [ids.data, ids.ada, ids.keyAda, 'search'],
      [ids.data, ids.cy, ids.keyCy, 'fetch'],
      [ids.web, ids.bob, ids.keyBob, 'search'],
    ];
    const events: UsageEvent[] = [];
    for (let i = 0; i < 60; i++) {
      const [teamId, userId, keyId, toolName] = calls[i % 3];
      events.push({
        id: randomUUID(),
        orgId,
        teamId,
        userId,
        keyId,
        upstreamId: upstreams[i % 2],
        toolName: i % 5 === 0 ? 'write' : toolName,
        outcome: i % 7 === 0 ? 'TOOL_ERROR' : 'OK',
        costMicros: BigInt(1000 + i * 37),
        inputTokens: 5,
        outputTokens: i * 3,
        latencyMs: 10,
        priceRuleId: null,
        occurredAt: new Date(Date.now() - i * 41 * 60_000),
      });
    }
    for (let i = 0; i < 6; i++)
      events.push({
        ...events[i],
        id: randomUUID(),
        teamId: ids.web,
        userId: ids.dee,
        keyId: ids.keyDee,
        toolName: 'search',
        costMicros: BigInt(500_000 + i),
      });
    expect(await new LedgerService(prisma).writeUsageEvents(events)).toBe(66);

    const budgets: [string, string][] = [
      ['ORG', orgId],
      ['TEAM', ids.data],
      ['TEAM', ids.web],
      ['USER', ids.ada],
      ['USER', ids.cy],
      ['USER', ids.bob],
      ['USER', ids.dee],
      ['KEY', ids.keyAda],
      ['KEY', ids.keyCy],
      ['KEY', ids.keyBob],
      ['KEY', ids.keyDee],
    ];
    for (const [scope, scopeId] of budgets) {
      const res = await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
        scope,
        scopeId,
        period: 'MONTH',
        limitMicros: 10_000_000,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    tokens.finance = await issueToken({ role: 'FINANCE', name: 'finance' });
    tokens.orgAdmin = await issueToken({ role: 'ORG_ADMIN', name: 'admin' });
    tokens.teamAdmin = await issueToken({ role: 'TEAM_ADMIN', teamId: ids.data, name: 'data lead' });
    tokens.webAdmin = await issueToken({ role: 'TEAM_ADMIN', teamId: ids.web, name: 'web lead' });
    tokens.member = await issueToken({ role: 'MEMBER', userId: ids.ada, name: 'ada' });
  });

  afterAll(async () => {
    await prisma?.onApplicationShutdown();
    await p?.close();
  });

  it('should let finance read the whole org with totals equal to the ledger', async () => {
    const res = await spend('groupBy=team', tokens.finance);
    expect(res.status).toBe(200);
    expect(res.body.scope).toEqual({ kind: 'org', id: null });
    expect(res.body.filters).toMatchObject({ teamId: [], userId: [] });
    expect(res.body.totals).toEqual(await ledgerSums());
    expect(res.body.rows.map((r: { teamName: string }) => r.teamName).sort()).toEqual(['data', 'web']);
  });

  it('should show a team admin only its team’s calls, forced, and refuse another team with 403 naming teamId', async () => {
    const dataOnly = await ledgerSums({ teamId: ids.data });
    for (const query of ['groupBy=user', `groupBy=user&teamId=${ids.data}`]) {
      const res = await spend(query, tokens.teamAdmin);
      expect(res.status, query).toBe(200);
      expect(res.body.scope).toEqual({ kind: 'team', id: ids.data });
      expect(res.body.filters.teamId).toEqual([ids.data]);
      expect(res.body.totals).toEqual(dataOnly);
      expect(res.body.rows.map((r: { userEmail: string }) => r.userEmail).sort()).toEqual([
        'ada@scoped.test',
        'cy@scoped.test',
      ]);
    }
    // A cross breakdown and a tool filter inside the team.
    const tools = await spend('groupBy=tool,tag&tool=search', tokens.teamAdmin);
    expect(tools.status).toBe(200);
    expect(tools.body.totals).toEqual(await ledgerSums({ teamId: ids.data, toolName: 'search' }));
    for (const teamId of [ids.web, `${ids.data},${ids.web}`]) {
      const res = await spend(`groupBy=user&teamId=${teamId}`, tokens.teamAdmin);
      expect(res.status, teamId).toBe(403);
      expect(res.body.field).toBe('teamId');
      expect(res.body.message).toContain(ids.web);
      expect(JSON.stringify(res.body)).not.toMatch(/costMicros|bob@/);
    }
    // Another team's user is simply not in its calls.
    const bob = await spend(`userId=${ids.bob}`, tokens.teamAdmin);
    expect(bob.body.totals.calls).toBe(0);
  });

  it('should show a member only their own calls, forced, and refuse another user with 403 naming userId', async () => {
    const res = await spend('groupBy=key,tool', tokens.member);
    expect(res.status).toBe(200);
    expect(res.body.scope).toEqual({ kind: 'user', id: ids.ada });
    expect(res.body.filters.userId).toEqual([ids.ada]);
    expect(res.body.totals).toEqual(await ledgerSums({ userId: ids.ada }));
    expect(new Set(res.body.rows.map((r: { keyId: string }) => r.keyId))).toEqual(new Set([ids.keyAda]));
    const csv = await fetch(
      `${p.adminUrl}/v1/orgs/${orgId}/reports/spend?from=${from}&to=${to}&groupBy=user&format=csv`,
      {
        headers: { Authorization: `Bearer ${tokens.member}` },
      },
    );
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('ada@scoped.test');
    const other = await spend(`userId=${ids.bob}`, tokens.member);
    expect(other.status).toBe(403);
    expect(other.body.field).toBe('userId');
    expect(other.body.message).toMatch(/userId/);
  });

  it('should answer 400 naming the filter when a filter is malformed, whatever the role', async () => {
    for (const token of [tokens.finance, tokens.member]) {
      for (const [query, field] of [
        ['teamId=data', 'teamId'],
        [`userId=${ids.ada},,${ids.cy}`, 'userId'],
        [`keyId=${Array.from({ length: 101 }, () => randomUUID()).join(',')}`, 'keyId'],
        ['tool=a%00b', 'tool'],
        [`upstreamId=${'%F0%9F%92%A5'.repeat(10)}`, 'upstreamId'],
        ['tool=', ''],
        ['tool=%ED%A0%80,%F0%9F%92%A5', ''],
      ]) {
        const res = await spend(query, token);
        if (!field) expect(res.status, query).toBe(200);
        else {
          expect(res.status, query).toBe(400);
          expect(res.body.field, query).toBe(field);
        }
      }
    }
  });

  it('should list each role’s budgets, limits and spend alike: all for finance and org admins, the team’s and its keys’ for a team admin, their own for a member', async () => {
    const budgetsOf = async (path: 'budgets' | 'reports/budgets', token: string) => {
      const res = await p.admin('GET', `/v1/orgs/${orgId}/${path}`, undefined, token);
      expect(res.status, path).toBe(200);
      return (res.body as { scope: string; scopeId: string }[]).map((b) => `${b.scope}:${b.scopeId}`).sort();
    };
    const all = await budgetsOf('budgets', tokens.finance);
    expect(all).toHaveLength(11);
    const expected: [string, string[]][] = [
      [tokens.finance, all],
      [tokens.orgAdmin, all],
      // No org budget, no other team's, and no member's USER budget: dee's counts her web calls too.
      [tokens.teamAdmin, [`TEAM:${ids.data}`, `KEY:${ids.keyAda}`, `KEY:${ids.keyCy}`]],
      [tokens.webAdmin, [`TEAM:${ids.web}`, `KEY:${ids.keyBob}`, `KEY:${ids.keyDee}`]],
      [tokens.member, [`USER:${ids.ada}`, `KEY:${ids.keyAda}`]],
    ];
    for (const [token, scopes] of expected)
      for (const path of ['budgets', 'reports/budgets'] as const)
        expect(await budgetsOf(path, token), path).toEqual([...scopes].sort());

    // dee's USER budget does carry her web spend, which the data team's admin must not read.
    const deeSpend = (await ledgerSums({ userId: ids.dee })).costMicros;
    expect(deeSpend).toBeGreaterThan(3_000_000);
    const org = await p.admin('GET', `/v1/orgs/${orgId}/reports/budgets`, undefined, tokens.finance);
    expect(org.body.find((b: { scopeId: string }) => b.scopeId === ids.dee)).toMatchObject({
      scope: 'USER',
      spentMicros: deeSpend,
    });
    const data = await p.admin('GET', `/v1/orgs/${orgId}/reports/budgets`, undefined, tokens.teamAdmin);
    expect(JSON.stringify(data.body)).not.toContain(ids.dee);
    const dataSpent = data.body.reduce((sum: number, b: { spentMicros: number }) => sum + b.spentMicros, 0);
    expect(dataSpent).toBeLessThan(deeSpend);
  });
});
