import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { QueueName } from '@tollgate/queue';
import { callMeta, connectAgent, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { parseCsv } from '../support/console-browser';
import { RunningPlatform, startPlatform } from '../support/platform';

const PRICE = 100_000;
const DAY_MS = 24 * 3600 * 1000;
const utcDay = (offsetDays = 0) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);

describe('spend reports, end to end', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let fixture: FixtureServer;
  let orgId: string;
  let otherOrgId: string;
  const agents: Client[] = [];
  const ids = { teamData: '', teamWeb: '', ada: '', bob: '', keyA: '', keyB: '', upstream: '' };
  const tokens = { finance: '', member: '', otherAdmin: '', otherFinance: '' };
  // Wide enough that a run across UTC midnight still sees every call.
  const from = utcDay(-1);
  const to = utcDay(1);

  async function issueToken(body: Record<string, unknown>): Promise<string> {
    const res = await p.admin('POST', '/v1/admin-tokens', body);
    expect(res.status).toBe(201);
    return res.body.secret;
  }

  async function ledgerTotals(where: Record<string, unknown> = {}) {
    const rows = await db.usageEvent.findMany({ where: { orgId, ...where } });
    return {
      calls: rows.length,
      errors: rows.filter((r) => r.outcome !== 'OK').length,
      outputTokens: rows.reduce((s, r) => s + r.outputTokens, 0),
      costMicros: Number(rows.reduce((s, r) => s + r.costMicros, 0n)),
    };
  }

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startFixtureServer();

    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Acme', slug: 'acme' })).body.id;
    otherOrgId = (await p.admin('POST', '/v1/orgs', { name: 'Globex', slug: 'globex' })).body.id;
    ids.teamData = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'data, science' })).body.id;
    ids.teamWeb = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'web' })).body.id;
    ids.ada = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'ada@acme.test' })).body.id;
    ids.bob = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'bob@acme.test' })).body.id;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.teamData}/members`, { userId: ids.ada })).status).toBe(
      201,
    );
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.teamWeb}/members`, { userId: ids.bob })).status).toBe(
      201,
    );
    const keyA = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
      teamId: ids.teamData,
      userId: ids.ada,
      name: 'ada-agent',
    });
    const keyB = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
      teamId: ids.teamWeb,
      userId: ids.bob,
      name: 'bob-agent',
    });
    ids.keyA = keyA.body.key.id;
    ids.keyB = keyB.body.key.id;

    const up = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'fx',
      transport: 'STREAMABLE_HTTP',
      url: fixture.url,
    });
    expect(up.status).toBe(201);
    ids.upstream = up.body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${ids.upstream}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    const policy = await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fx:*'], deny: [] });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: ids.upstream,
          toolPattern: '*',
          perCallMicros: PRICE,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'KEY',
          scopeId: ids.keyA,
          period: 'MONTH',
          limitMicros: 1_000_000,
        })
      ).status,
    ).toBe(200);

    tokens.finance = await issueToken({ role: 'FINANCE', orgId, name: 'acme finance' });
    tokens.member = await issueToken({ role: 'MEMBER', orgId, userId: ids.ada, teamId: ids.teamData, name: 'ada' });
    tokens.otherAdmin = await issueToken({ role: 'ORG_ADMIN', orgId: otherOrgId, name: 'globex admin' });
    tokens.otherFinance = await issueToken({ role: 'FINANCE', orgId: otherOrgId, name: 'globex finance' });

    // Real governed calls: ada 3 ok + 1 tool error (free), bob 2 ok.
    const callIds: string[] = [];
    const a = await connectAgent(p.edgeUrl, keyA.body.secret, 'ada');
    const b = await connectAgent(p.edgeUrl, keyB.body.secret, 'bob');
    agents.push(a, b);
    for (const [agent, tool] of [
      [a, 'fx__ping'],
      [a, 'fx__ping'],
      [a, 'fx__huge'],
      [a, 'fx__fail'],
      [b, 'fx__ping'],
      [b, 'fx__ping'],
    ] as const) {
      const res = await agent.callTool({ name: tool, arguments: tool === 'fx__huge' ? { lines: 20 } : {} });
      callIds.push(callMeta(res as never)!.callId);
    }
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, callIds);
    expect(await db.usageEvent.count({ where: { orgId } })).toBe(6);
  });

  afterAll(async () => {
    for (const a of agents) await a.close();
    await fixture?.close();
    await db?.$disconnect();
    await p?.close();
  });

  it('should break spend down by team with totals equal to the ledger sums exactly', async () => {
    const res = await p.admin(
      'GET',
      `/v1/orgs/${orgId}/reports/spend?from=${from}&to=${to}&groupBy=team`,
      undefined,
      tokens.finance,
    );
    expect(res.status).toBe(200);
    const ledger = await ledgerTotals();
    expect(ledger).toMatchObject({ calls: 6, errors: 1, costMicros: 5 * PRICE });
    expect(res.body.totals).toEqual(ledger);
    expect(res.body.columns).toEqual(['teamId', 'teamName', 'calls', 'errors', 'outputTokens', 'costMicros']);
    expect(res.body.rows).toHaveLength(2);
    for (const row of res.body.rows) {
      expect(row).toEqual({
        teamId: row.teamId,
        teamName: row.teamId === ids.teamData ? 'data, science' : 'web',
        ...(await ledgerTotals({ teamId: row.teamId })),
      });
    }
  });

  it('should give key, tool and day rows whose figures each equal the ledger group', async () => {
    const res = await p.admin(
      'GET',
      `/v1/orgs/${orgId}/reports/spend?from=${from}&to=${to}&groupBy=key,tool,day`,
      undefined,
      tokens.finance,
    );
    expect(res.status).toBe(200);
    expect(res.body.columns).toEqual([
      'keyId',
      'keyName',
      'keyPrefix',
      'upstreamId',
      'upstreamNamespace',
      'toolName',
      'day',
      'calls',
      'errors',
      'outputTokens',
      'costMicros',
    ]);
    const events = await db.usageEvent.findMany({ where: { orgId } });
    const groups = new Set(events.map((e) => `${e.keyId}|${e.toolName}|${e.occurredAt.toISOString().slice(0, 10)}`));
    expect(res.body.rows).toHaveLength(groups.size);
    for (const row of res.body.rows) {
      const start = new Date(`${row.day}T00:00:00Z`);
      const expected = await ledgerTotals({
        keyId: row.keyId,
        toolName: row.toolName,
        occurredAt: { gte: start, lt: new Date(start.getTime() + DAY_MS) },
      });
      expect(row).toMatchObject({
        upstreamNamespace: 'fx',
        keyName: row.keyId === ids.keyA ? 'ada-agent' : 'bob-agent',
        ...expected,
      });
    }
    expect(res.body.totals).toEqual(await ledgerTotals());
  });

  it('should page a report sorted on the server, with each group’s subtotal over every page, and keep the CSV whole', async () => {
    const base = `/v1/orgs/${orgId}/reports/spend?from=${from}&to=${to}&groupBy=key,tool,day`;
    const all = (await p.admin('GET', base, undefined, tokens.finance)).body;
    const pages: {
      rows: Record<string, unknown>[];
      totals: Record<string, number>;
      page: { totalRows: number; totalLines: number; subtotals: { group: string; figures: Record<string, number> }[] };
    }[] = [];
    for (let offset = 0; ; offset += 2) {
      const res = await p.admin(
        'GET',
        `${base}&sort=costMicros:desc&limit=2&offset=${offset}`,
        undefined,
        tokens.finance,
      );
      expect(res.status).toBe(200);
      pages.push(res.body);
      if (offset + 2 >= res.body.page.totalLines) break;
    }
    const keys = new Set(all.rows.map((r: { keyId: string }) => r.keyId));
    // Every row once, and one subtotal line per key, over all pages.
    expect(pages[0].page).toMatchObject({ totalRows: all.rows.length, totalLines: all.rows.length + keys.size });
    expect(pages.flatMap((pg) => pg.rows)).toHaveLength(all.rows.length);
    const subtotals = pages.flatMap((pg) => pg.page.subtotals);
    expect(subtotals).toHaveLength(keys.size);
    // The costliest key first, each subtotal its key's ledger sum, in descending order.
    const sums = subtotals.map((s) => s.figures.costMicros);
    expect(sums).toEqual([...sums].sort((a, b) => b - a));
    for (const s of subtotals) {
      const keyId = s.group.startsWith('ada-agent') ? ids.keyA : ids.keyB;
      expect(s.figures).toEqual(await ledgerTotals({ keyId }));
    }
    expect(pages[0].totals).toEqual(await ledgerTotals());
    // The CSV ignores paging: every row.
    const csv = await fetch(`${p.adminUrl}${base}&limit=2&format=csv`, {
      headers: { Authorization: `Bearer ${tokens.finance}` },
    });
    expect(parseCsv(await csv.text())).toHaveLength(all.rows.length + 1);
  });

  it('should bound the JSON answer to its costliest rows with top, the rest summed, and keep the CSV whole', async () => {
    const base = `/v1/orgs/${orgId}/reports/spend?from=${from}&to=${to}&groupBy=key,tool,day`;
    const all = (await p.admin('GET', base, undefined, tokens.finance)).body;
    // The default bound holds this small report whole.
    expect(all).toMatchObject({ top: 1000, truncated: false, remainder: null });
    const ledger = await ledgerTotals();
    const figures = ['calls', 'errors', 'outputTokens', 'costMicros'] as const;
    for (const top of [1, all.rows.length - 1, all.rows.length]) {
      const res = await p.admin('GET', `${base}&top=${top}`, undefined, tokens.finance);
      expect(res.status).toBe(200);
      expect(res.body.rows).toHaveLength(top);
      expect(res.body.top).toBe(top);
      expect(res.body.totals).toEqual(ledger);
      const left = all.rows.length - top;
      expect(res.body.truncated).toBe(left > 0);
      if (left === 0) expect(res.body.remainder).toBeNull();
      else expect(res.body.remainder.rows).toBe(left);
      // Rows plus remainder are the ledger's sums; the rows kept are the costliest, as they were.
      for (const m of figures)
        expect(
          res.body.rows.reduce((s: number, r: Record<string, number>) => s + r[m], 0) + (res.body.remainder?.[m] ?? 0),
        ).toBe(ledger[m]);
      const cheapestKept = Math.min(...res.body.rows.map((r: { costMicros: number }) => r.costMicros));
      for (const row of all.rows.filter(
        (r: object) => !res.body.rows.some((k: object) => JSON.stringify(k) === JSON.stringify(r)),
      ))
        expect(row.costMicros).toBeLessThanOrEqual(cheapestKept);
    }
    // The CSV ignores top as it ignores paging: every row.
    const csv = await fetch(`${p.adminUrl}${base}&top=1&format=csv`, {
      headers: { Authorization: `Bearer ${tokens.finance}` },
    });
    expect(parseCsv(await csv.text())).toHaveLength(all.rows.length + 1);
    // A page is bounded already: top with limit is refused, naming top.
    const both = await p.admin('GET', `${base}&top=1&limit=2`, undefined, tokens.finance);
    expect(both.status).toBe(400);
    expect(both.body.field).toBe('top');
    const page = (await p.admin('GET', `${base}&limit=2`, undefined, tokens.finance)).body;
    expect(page).toMatchObject({ top: null, truncated: false, remainder: null });
  });

  it('should give the same rows as CSV with Accept: text/csv and with format=csv', async () => {
    const json = await p.admin(
      'GET',
      `/v1/orgs/${orgId}/reports/spend?from=${from}&to=${to}&groupBy=team,user`,
      undefined,
      tokens.finance,
    );
    for (const [query, accept] of [
      ['', 'text/csv'],
      ['&format=csv', 'application/json'],
    ]) {
      const res = await fetch(
        `${p.adminUrl}/v1/orgs/${orgId}/reports/spend?from=${from}&to=${to}&groupBy=team,user${query}`,
        {
          headers: { Authorization: `Bearer ${tokens.finance}`, Accept: accept },
        },
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
      const [header, ...lines] = parseCsv(await res.text());
      expect(header).toEqual(json.body.columns);
      const asObjects = lines.map((l) =>
        Object.fromEntries(
          header.map((h, i) => [
            h,
            ['calls', 'errors', 'outputTokens', 'costMicros'].includes(h) ? Number(l[i]) : l[i],
          ]),
        ),
      );
      expect(asObjects).toEqual(json.body.rows);
      expect(asObjects.reduce((s, r) => s + (r.costMicros as number), 0)).toBe((await ledgerTotals()).costMicros);
    }
  });

  it('should filter by team, user, key, upstream and tool with figures equal to the ledger’s for those calls', async () => {
    const cases: [string, Record<string, unknown>][] = [
      [`teamId=${ids.teamData}`, { teamId: ids.teamData }],
      [`userId=${ids.bob},${ids.ada}`, { userId: { in: [ids.bob, ids.ada] } }],
      [`keyId=${ids.keyA}&tool=ping,fail`, { keyId: ids.keyA, toolName: { in: ['ping', 'fail'] } }],
      [`upstreamId=${ids.upstream}&tool=ping`, { upstreamId: ids.upstream, toolName: 'ping' }],
      [`teamId=${ids.teamWeb}&userId=${ids.ada}`, { teamId: ids.teamWeb, userId: ids.ada }],
    ];
    for (const [filter, where] of cases) {
      for (const groupBy of ['', 'tool', 'user,day']) {
        const q = `from=${from}&to=${to}&groupBy=${groupBy}&${filter}`;
        const res = await p.admin('GET', `/v1/orgs/${orgId}/reports/spend?${q}`, undefined, tokens.finance);
        expect(res.status, q).toBe(200);
        const ledger = await ledgerTotals(where);
        expect(res.body.totals, q).toEqual(ledger);
        expect(
          res.body.rows.reduce((s: number, r: { calls: number }) => s + r.calls, 0),
          q,
        ).toBe(ledger.calls);
      }
    }
    const csv = await fetch(
      `${p.adminUrl}/v1/orgs/${orgId}/reports/spend?from=${from}&to=${to}&groupBy=key&format=csv&userId=${ids.bob}`,
      { headers: { Authorization: `Bearer ${tokens.finance}` } },
    );
    const [header, ...lines] = parseCsv(await csv.text());
    expect(lines.map((l) => l[header.indexOf('keyId')])).toEqual([ids.keyB]);
    const echoed = await p.admin(
      'GET',
      `/v1/orgs/${orgId}/reports/spend?from=${from}&to=${to}&tool=ping&keyId=${ids.keyA.toUpperCase()}`,
      undefined,
      tokens.finance,
    );
    expect(echoed.body.filters).toEqual({
      teamId: [],
      userId: [],
      keyId: [ids.keyA],
      upstreamId: [],
      tool: ['ping'],
      tag: null,
    });
    expect(echoed.body.scope).toEqual({ kind: 'org', id: null });
  });

  it('should count nothing outside the date range', async () => {
    const res = await p.admin(
      'GET',
      `/v1/orgs/${orgId}/reports/spend?from=2020-01-01&to=2020-01-31&groupBy=day`,
      undefined,
      tokens.finance,
    );
    expect(res.status).toBe(200);
    expect(res.body.rows).toEqual([]);
    expect(res.body.totals).toEqual({ calls: 0, errors: 0, outputTokens: 0, costMicros: 0 });
  });

  it('should answer 400 naming the field when a query parameter is invalid', async () => {
    const cases: [string, string][] = [
      [`from=2026-13-01&to=${to}`, 'from'],
      [`from=${from}`, 'to'],
      [`from=${to}&to=${from}`, 'to'],
      [`from=${from}&to=${to}&groupBy=team,planet`, 'groupBy'],
      [`from=${from}&to=${to}&format=xml`, 'format'],
      [`from=${from}&to=${to}&groupBy=key&sort=team:asc`, 'sort'],
      [`from=${from}&to=${to}&limit=0`, 'limit'],
      [`from=${from}&to=${to}&groupBy=key&top=0`, 'top'],
      [`from=${from}&to=${to}&groupBy=key&top=50001`, 'top'],
      [`from=${from}&to=${to}&groupBy=key&top=2.5`, 'top'],
      [`from=yesterday&to=${to}`, 'from'],
      [`from=${from}&to=${to}&teamId=not-a-uuid`, 'teamId'],
      [`from=${from}&to=${to}&userId=${ids.ada},`, 'userId'],
      [`from=${from}&to=${to}&keyId=${ids.keyA}&keyId=${ids.keyB}`, 'keyId'],
      [`from=${from}&to=${to}&upstreamId=${'0'.repeat(36)}`, 'upstreamId'],
      [`from=${from}&to=${to}&tool=${Array.from({ length: 101 }, (_, i) => `t${i}`).join(',')}`, 'tool'],
    ];
    for (const [query, field] of cases) {
      const res = await p.admin('GET', `/v1/orgs/${orgId}/reports/spend?${query}`, undefined, tokens.finance);
      expect(res.status, query).toBe(400);
      expect(res.body.field, query).toBe(field);
    }
  });

  it('should let finance read but answer 404 to another organization’s admin and finance, with no data', async () => {
    for (const path of [
      `/reports/spend?from=${from}&to=${to}`,
      '/reports/budgets',
      '/alerts',
      '/alert-webhooks',
      '/budgets/reconcile',
    ]) {
      for (const token of [tokens.otherAdmin, tokens.otherFinance]) {
        const res = await p.admin('GET', `/v1/orgs/${orgId}${path}`, undefined, token);
        expect(res.status, path).toBe(404);
        expect(JSON.stringify(res.body)).not.toMatch(/costMicros|teamName|ada@/);
      }
    }
    // A member reads its own calls only (test/e2e/report-scope.e2e.test.ts covers every role).
    const mine = await p.admin(
      'GET',
      `/v1/orgs/${orgId}/reports/spend?from=${from}&to=${to}`,
      undefined,
      tokens.member,
    );
    expect(mine.status).toBe(200);
    expect(mine.body.scope).toEqual({ kind: 'user', id: ids.ada });
    expect(mine.body.totals).toEqual(await ledgerTotals({ userId: ids.ada }));
    expect((await p.admin('GET', `/v1/orgs/${orgId}/reports/budgets`, undefined, tokens.finance)).status).toBe(200);
    // The other org's own report is empty: nothing of Acme's leaks into it.
    const own = await p.admin(
      'GET',
      `/v1/orgs/${otherOrgId}/reports/spend?from=${from}&to=${to}&groupBy=team`,
      undefined,
      tokens.otherFinance,
    );
    expect(own.status).toBe(200);
    expect(own.body.totals.calls).toBe(0);
  });

  it('should show budget utilisation in basis points from the live counter', async () => {
    const res = await p.admin('GET', `/v1/orgs/${orgId}/reports/budgets`, undefined, tokens.finance);
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
    const ada = await ledgerTotals({ keyId: ids.keyA });
    expect(res.body[0]).toMatchObject({
      scope: 'KEY',
      scopeId: ids.keyA,
      period: 'MONTH',
      limitMicros: 1_000_000,
      spentMicros: ada.costMicros,
      reservedMicros: 0,
      source: 'counter',
      // Named by the API, so a page labels it without reading every key.
      scopeName: expect.stringMatching(/^ada-agent \(tg/),
    });
    expect(res.body[0].utilisationBp).toBe(Math.floor((ada.costMicros * 10_000) / 1_000_000));
    expect(new Date(res.body[0].resetsAt).getUTCDate()).toBe(1);
  });

  it('should repair corrupted rollups from the ledger when an admin asks, for a day or all, so reports and tool scores agree with it again', async () => {
    const day = (await db.usageEvent.findFirst({
      where: { orgId, keyId: ids.keyA },
      orderBy: { occurredAt: 'desc' },
    }))!.occurredAt
      .toISOString()
      .slice(0, 10);
    const report = async () =>
      (
        await p.admin(
          'GET',
          `/v1/orgs/${orgId}/reports/spend?from=${from}&to=${to}&groupBy=key`,
          undefined,
          tokens.finance,
        )
      ).body;
    // What tool scores read: the UTC daily rollup.
    const dailyTotals = async () => {
      const rows = await db.usageDailyRollup.findMany({ where: { orgId } });
      return {
        calls: rows.reduce((s, r) => s + r.calls, 0),
        errors: rows.reduce((s, r) => s + r.errors, 0),
        outputTokens: Number(rows.reduce((s, r) => s + r.outputTokens, 0n)),
        costMicros: Number(rows.reduce((s, r) => s + r.costMicros, 0n)),
      };
    };
    const right = await report();
    expect(right.totals).toEqual(await ledgerTotals());
    expect(await dailyTotals()).toEqual(await ledgerTotals());
    // Rows gone wrong (as a bug or a hand edit would leave them): the report and the scores' input disagree with the ledger.
    const corrupt = async () => {
      const wrong = { calls: { increment: 5 }, costMicros: { increment: 777n } };
      await db.usageKeyDayRollup.updateMany({ where: { orgId, keyId: ids.keyA, day: new Date(day) }, data: wrong });
      await db.usageDailyRollup.updateMany({ where: { orgId, keyId: ids.keyA, day: new Date(day) }, data: wrong });
      expect((await report()).totals).not.toEqual(right.totals);
      expect(await dailyTotals()).not.toEqual(await ledgerTotals());
    };
    for (const asked of [{ day }, {}]) {
      await corrupt();
      const res = await p.admin('POST', `/v1/orgs/${orgId}/reports/rollups`, asked);
      expect(res.status).toBe(202);
      expect(res.body.day).toBe(asked.day ?? null);
      await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.UsageRollup, [res.body.jobId]);
      expect(await report()).toEqual(right);
      expect(await dailyTotals()).toEqual(await ledgerTotals());
      const byKeyTool = await db.usageDailyRollup.findFirst({ where: { orgId, keyId: ids.keyA, toolName: 'ping' } });
      expect(byKeyTool).toMatchObject({ teamId: ids.teamData, userId: ids.ada, upstreamId: ids.upstream });
      const audit = await db.auditEvent.findFirst({
        where: { orgId, action: 'rollup.requested' },
        orderBy: { createdAt: 'desc' },
      });
      expect(audit?.details).toEqual({ day: asked.day ?? null, jobId: res.body.jobId });
    }
    const bad = await p.admin('POST', `/v1/orgs/${orgId}/reports/rollups`, { day: '2026-02-30' });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('day');
  });
});
