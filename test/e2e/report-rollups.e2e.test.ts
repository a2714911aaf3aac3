import { BaseConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { LedgerService, UsageEvent } from '@tollgate/usage';
import {
  dekadOf,
  ReportDimension,
  SpendFilters,
  SpendReportService,
  UsageRollupService,
  reportSource,
} from '@tollgate/reporting';
import { cloneDatabase, databaseUrl, dropDatabase } from '@tollgate/testing';
import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

/**
 * Spend reports read the rollups the ledger's insert trigger keeps (per key, per tool, and per key
 * and tool, by the org's local day), the smallest that fits the breakdown and filters, the ledger
 * while the rollups are of another zone. Whatever the source, every
 * figure must equal the ledger's own sums over the org's calendar days: checked here against rows
 * written by the production ledger writer, duplicates included, across a zone change.
 */
describe('spend report rollups, against the ledger', () => {
  let dbName: string;
  let prisma: PrismaService;
  let ledger: LedgerService;
  let reports: SpendReportService;
  let rollups: UsageRollupService;
  const orgId = randomUUID();
  const teams = [randomUUID(), randomUUID()];
  const users = [randomUUID(), randomUUID(), randomUUID()];
  const keys = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const upstreams = [randomUUID(), randomUUID()];
  const written: UsageEvent[] = [];
  const now = DateTime.utc();
  const from = now.minus({ days: 6 }).toISODate() as string;
  const to = now.plus({ days: 1 }).toISODate() as string;

  function event(i: number): UsageEvent {
    const k = i % keys.length;
    return {
      id: randomUUID(),
      orgId,
      teamId: teams[k % 2],
      userId: users[k % 3],
      keyId: keys[k],
      upstreamId: upstreams[i % 2],
      toolName: `tool_${i % 5}`,
      outcome: i % 7 === 0 ? 'TOOL_ERROR' : i % 11 === 0 ? 'UPSTREAM_ERROR' : 'OK',
      costMicros: BigInt(1000 + ((i * 7919) % 5000)),
      inputTokens: 10,
      outputTokens: (i * 31) % 700,
      latencyMs: 20,
      priceRuleId: null,
      // Every hour of the last five days: calls on both sides of midnight in any zone.
      occurredAt: now.minus({ minutes: 37 * i }).toJSDate(),
    };
  }

  /** The ledger's sums per group over the report's local days, computed here from the rows themselves. */
  async function ledgerGroups(
    zone: string,
    groupBy: ReportDimension[],
    tag?: string,
    filters: Partial<SpendFilters> = {},
    range = { from, to },
  ): Promise<Map<string, { calls: number; errors: number; outputTokens: number; costMicros: bigint }>> {
    const kept = (values: string[] | undefined, v: string) => !values?.length || values.includes(v);
    const rows = await prisma.usageEvent.findMany({ where: { orgId } });
    const tags = new Map((await prisma.virtualKey.findMany({ where: { orgId } })).map((k) => [k.id, k.tags]));
    const out = new Map<string, { calls: number; errors: number; outputTokens: number; costMicros: bigint }>();
    for (const r of rows) {
      const day = DateTime.fromJSDate(r.occurredAt).setZone(zone).toISODate() as string;
      if (day < range.from || day > range.to) continue;
      if (tag && !tags.get(r.keyId)?.includes(tag)) continue;
      if (
        !kept(filters.teamId, r.teamId) ||
        !kept(filters.userId, r.userId) ||
        !kept(filters.keyId, r.keyId) ||
        !kept(filters.upstreamId, r.upstreamId) ||
        !kept(filters.tool, r.toolName)
      )
        continue;
      const keyTags = groupBy.includes('tag') ? (tags.get(r.keyId)?.length ? tags.get(r.keyId)! : [null]) : [null];
      for (const t of keyTags) {
        const parts = groupBy.map(
          (d) =>
            ({
              team: r.teamId,
              user: r.userId,
              key: r.keyId,
              upstream: r.upstreamId,
              tool: `${r.upstreamId}/${r.toolName}`,
              day,
              tag: t,
            })[d],
        );
        const id = parts.join('|');
        const g = out.get(id) ?? { calls: 0, errors: 0, outputTokens: 0, costMicros: 0n };
        g.calls++;
        if (r.outcome !== 'OK') g.errors++;
        g.outputTokens += r.outputTokens;
        g.costMicros += r.costMicros;
        out.set(id, g);
      }
    }
    return out;
  }

  async function expectReportEqualsLedger(
    zone: string,
    groupBy: ReportDimension[],
    tag?: string,
    filters: Partial<SpendFilters> = {},
    range = { from, to },
  ): Promise<void> {
    const report = await reports.spendReport(orgId, range.from, range.to, groupBy, {
      filters: { ...filters, tag: tag ?? null },
    });
    expect(report.timeZone).toBe(zone);
    const expected = await ledgerGroups(zone, groupBy, tag, filters, range);
    const got = new Map(
      report.rows.map((r) => [
        groupBy
          .map(
            (d) =>
              ({
                team: r.teamId,
                user: r.userId,
                key: r.keyId,
                upstream: r.upstreamId,
                tool: `${r.upstreamId}/${r.toolName}`,
                day: r.day,
                tag: r.tag,
              })[d],
          )
          .join('|'),
        {
          calls: Number(r.figures.calls),
          errors: Number(r.figures.errors),
          outputTokens: Number(r.figures.outputTokens),
          costMicros: r.figures.costMicros,
        },
      ]),
    );
    expect(
      got,
      `groupBy ${groupBy.join(',') || '(none)'}${tag ? ` tag ${tag}` : ''} filters ${JSON.stringify(filters)} ${range.from}..${range.to}`,
    ).toEqual(expected);
    const all = await ledgerGroups(zone, [], tag, filters, range);
    const total = all.get('') ?? { calls: 0, errors: 0, outputTokens: 0, costMicros: 0n };
    expect(report.totals).toEqual({
      calls: BigInt(total.calls),
      errors: BigInt(total.errors),
      outputTokens: BigInt(total.outputTokens),
      costMicros: total.costMicros,
    });
  }

  /**
   * Reports of the rollups with month rows (tools by tag org-wide and per team, and the
   * per-key-and-tool one: users or keys by tool) over ranges that take months whole from the month rows (a month before the calls,
   * this month with no calls after the range) or only in part (calls before or after the range in
   * its first or last month): from the day rows of its days in the range, or from its month rows
   * less the day rows of the days left out when those are fewer (late in a month, the third range's
   * last month); the per-key-and-tool one also by its dekads (days 1-10, 11-20, 21 to the end) whole
   * or less their days outside the range (the last range starts on a dekad's first day): equal to
   * the ledger every way.
   */
  async function expectMonthRowsEqualLedger(zone: string): Promise<void> {
    const day = (d: DateTime) => d.setZone(zone).toISODate() as string;
    const ranges = [
      { from: day(now.minus({ days: 40 }).startOf('month')), to },
      { from: day(now.minus({ days: 2 })), to },
      { from: day(now.minus({ days: 40 })), to: day(now.minus({ days: 2 })) },
      { from: day(now.minus({ days: 3 })), to: day(now.minus({ days: 1 })) },
      { from: dekadOf(day(now.minus({ days: 4 }))), to: day(now.minus({ days: 1 })) },
    ];
    for (const range of ranges) {
      await expectReportEqualsLedger(zone, ['tool', 'tag'], undefined, {}, range);
      await expectReportEqualsLedger(zone, ['tool'], 'env:prod', {}, range);
      // The team rows' months, the same way.
      await expectReportEqualsLedger(zone, ['tool', 'tag'], undefined, { teamId: [teams[0]] }, range);
      await expectReportEqualsLedger(zone, ['team', 'upstream'], undefined, {}, range);
      await expectReportEqualsLedger(zone, ['team', 'tool'], 'project:a', { upstreamId: [upstreams[1]] }, range);
      // The per-key-and-tool month rows, alone, filtered, and summed per tag set; users by tool and a
      // user's tools from the per-user ones.
      await expectReportEqualsLedger(zone, ['user', 'tool'], undefined, {}, range);
      await expectReportEqualsLedger(zone, ['user', 'upstream'], undefined, { teamId: [teams[1]] }, range);
      await expectReportEqualsLedger(zone, ['key'], undefined, { tool: ['tool_1', 'tool_3'] }, range);
      await expectReportEqualsLedger(zone, ['tool'], undefined, { userId: [users[1]] }, range);
      await expectReportEqualsLedger(zone, ['tool', 'tag'], 'env:prod', { keyId: [keys[0], keys[2]] }, range);
    }
  }

  const BREAKDOWNS: ReportDimension[][] = [
    [],
    ['day'],
    ['team', 'day'],
    ['user'],
    ['key'],
    ['tag'],
    ['tag', 'day'],
    ['team', 'tag'],
    ['upstream', 'day'],
    ['tool'],
    ['team', 'tool'],
    ['tag', 'upstream'],
    ['tool', 'tag'],
    ['user', 'tool'],
    ['team', 'upstream', 'day'],
  ];

  // Filters alone and with breakdowns that each rollup (or only the per-key-and-tool one) holds.
  const FILTERED: [ReportDimension[], Partial<SpendFilters>, string?][] = [
    [['day'], { teamId: [teams[0]] }],
    [['tool'], { userId: [users[1]] }],
    [['key'], { tool: ['tool_1', 'tool_3'] }],
    [['tool'], { upstreamId: [upstreams[0]], tool: ['tool_1', 'tool_2'] }],
    [['team', 'tag'], { upstreamId: [upstreams[1]] }],
    [['tool', 'tag'], { keyId: [keys[0], keys[2]] }, 'env:prod'],
    [['tool'], { upstreamId: [upstreams[0]] }, 'env:prod'],
    [['tag', 'day'], { tool: ['tool_1', 'tool_2'] }, 'project:a'],
    [[], { teamId: [teams[1]], userId: [users[0], users[2]], tool: ['tool_4'] }],
    [['user'], { teamId: [randomUUID()] }],
    [['tool', 'tag'], { teamId: [teams[1]] }],
    [['team', 'upstream'], { tool: ['tool_1', 'tool_2'] }, 'env:prod'],
    [['tag', 'day'], { teamId: [teams[0]], upstreamId: [upstreams[0]] }],
  ];

  beforeAll(async () => {
    dbName = await cloneDatabase(inject('templateDatabase'));
    prisma = new PrismaService({ db: { url: databaseUrl(dbName) } } as BaseConfig);
    ledger = new LedgerService(prisma);
    reports = new SpendReportService(prisma);
    rollups = new UsageRollupService(prisma);
    await prisma.organization.create({
      data: { id: orgId, name: 'Rollups', slug: `rollups-${orgId.slice(0, 8)}`, timeZone: 'America/New_York' },
    });
    for (const [i, id] of teams.entries()) await prisma.team.create({ data: { id, orgId, name: `team-${i}` } });
    for (const [i, id] of users.entries())
      await prisma.user.create({ data: { id, orgId, email: `u${i}@rollups.test` } });
    const tagSets = [['env:prod', 'project:a'], ['env:prod'], [], ['project:a']];
    for (const [i, id] of keys.entries()) {
      await prisma.virtualKey.create({
        data: {
          id,
          orgId,
          teamId: teams[i % 2],
          userId: users[i % 3],
          name: `k${i}`,
          prefix: `tg_r${i}`,
          secretHash: randomUUID(),
          tags: tagSets[i],
        },
      });
    }
    for (const [i, id] of upstreams.entries())
      await prisma.upstreamServer.create({
        data: { id, orgId, namespace: `up${i}`, transport: 'STREAMABLE_HTTP', url: 'http://127.0.0.1:9/mcp' },
      });
    for (let i = 0; i < 200; i++) written.push(event(i));
    // Batches as the worker writes them, one delivered twice: the repeat must count nothing.
    for (let b = 0; b < 200; b += 40) await ledger.writeUsageEvents(written.slice(b, b + 40));
    expect(await ledger.writeUsageEvents(written.slice(40, 80))).toBe(0);
  });

  afterAll(async () => {
    await prisma?.onApplicationShutdown();
    if (dbName) await dropDatabase(dbName);
  });

  it('should keep rollups whose sums equal the ledger, a repeated batch counted once', async () => {
    const [ledgerSum] = await prisma.$queryRaw<
      { calls: bigint; cost: bigint }[]
    >`SELECT count(*) AS calls, sum("costMicros")::bigint AS cost FROM "UsageEvent" WHERE "orgId" = ${orgId}::uuid`;
    for (const table of [
      'UsageKeyDayRollup',
      'UsageToolDayRollup',
      'UsageCallDayRollup',
      'UsageCallMonthRollup',
      'UsageCallDekadRollup',
      'UsageUserCallMonthRollup',
      'UsageUserCallDekadRollup',
      'UsageToolTagDayRollup',
      'UsageToolTagMonthRollup',
      'UsageTeamToolTagDayRollup',
      'UsageTeamToolTagMonthRollup',
    ]) {
      const [r] = await prisma.$queryRawUnsafe<{ calls: bigint; cost: bigint }[]>(
        `SELECT sum(calls)::bigint AS calls, sum("costMicros")::bigint AS cost FROM "${table}" WHERE "orgId" = $1::uuid`,
        orgId,
      );
      expect(r, table).toEqual(ledgerSum);
    }
    expect(ledgerSum.calls).toBe(200n);
  });

  it('should read the smallest rollup that holds the breakdown and filters, the ledger when they are stale', () => {
    expect(reportSource(['team', 'day'], {}, true)).toBe('keyDays');
    expect(reportSource(['tag'], { tag: 'env:prod' }, true)).toBe('keyDays');
    expect(reportSource(['day'], { teamId: [teams[0]] }, true)).toBe('keyDays');
    expect(reportSource(['tool', 'day'], {}, true)).toBe('toolDays');
    expect(reportSource([], {}, true)).toBe('toolDays');
    expect(reportSource(['upstream'], { tool: ['tool_1'] }, true)).toBe('toolDays');
    expect(reportSource(['tool'], { tag: 'env:prod' }, true)).toBe('toolTagDays');
    expect(reportSource(['tool', 'tag'], {}, true)).toBe('toolTagDays');
    expect(reportSource(['tag', 'upstream', 'day'], { tool: ['tool_1'] }, true)).toBe('toolTagDays');
    expect(reportSource(['tool', 'tag'], { keyId: [keys[0]] }, true)).toBe('callDays');
    expect(reportSource(['tool', 'tag'], { teamId: [teams[0]] }, true)).toBe('teamToolTagDays');
    expect(reportSource(['team', 'tool'], {}, true)).toBe('teamToolTagDays');
    expect(reportSource(['team', 'upstream', 'day'], { tag: 'env:prod' }, true)).toBe('teamToolTagDays');
    expect(reportSource(['user', 'tool'], {}, true)).toBe('userCallDays');
    expect(reportSource(['user', 'tool'], { tag: 'env:prod' }, true)).toBe('callDays');
    expect(reportSource(['key'], { tool: ['tool_1'] }, true)).toBe('callDays');
    expect(reportSource(['key', 'tool'], {}, true)).toBe('callDays');
    expect(reportSource(['tool'], { userId: [users[0]] }, true)).toBe('userCallDays');
    expect(reportSource(['tool'], { userId: [users[0]], keyId: [keys[0]] }, true)).toBe('callDays');
    expect(reportSource(['team'], {}, false)).toBe('ledger');
  });

  it('should give every breakdown and tag filter figures equal to the ledger over the org’s local days', async () => {
    for (const groupBy of BREAKDOWNS) await expectReportEqualsLedger('America/New_York', groupBy);
    await expectReportEqualsLedger('America/New_York', ['key', 'day'], 'project:a');
    await expectReportEqualsLedger('America/New_York', [], 'env:prod');
  });

  it('should give every filter, alone and combined, figures equal to the ledger’s for the same calls', async () => {
    for (const [groupBy, filters, tag] of FILTERED)
      await expectReportEqualsLedger('America/New_York', groupBy, tag, filters);
  });

  it('should follow a key’s tags when they change or the key goes: tools by tag stay equal to the ledger', async () => {
    // keys[1] had env:prod only, keys[2] none: sums move between tag sets, one to a set no row had yet.
    await prisma.virtualKey.update({ where: { id: keys[1] }, data: { tags: ['project:a', 'env:dev'] } });
    await prisma.virtualKey.update({ where: { id: keys[2] }, data: { tags: ['env:prod'] } });
    // A deleted key's calls have no tags (the reports' join to it finds none).
    await prisma.virtualKey.delete({ where: { id: keys[3] } });
    for (const groupBy of [
      ['tool', 'tag'],
      ['tag', 'upstream'],
      ['tool', 'tag', 'day'],
    ] as ReportDimension[][])
      await expectReportEqualsLedger('America/New_York', groupBy);
    for (const tag of ['env:prod', 'env:dev', 'project:a'])
      await expectReportEqualsLedger('America/New_York', ['tool'], tag);
    await expectMonthRowsEqualLedger('America/New_York');
    const [emptied] = await prisma.$queryRaw<{ n: bigint }[]>`
      SELECT (SELECT count(*) FROM "UsageToolTagDayRollup" WHERE "orgId" = ${orgId}::uuid AND "calls" = 0)
           + (SELECT count(*) FROM "UsageToolTagMonthRollup" WHERE "orgId" = ${orgId}::uuid AND "calls" = 0)
           + (SELECT count(*) FROM "UsageTeamToolTagDayRollup" WHERE "orgId" = ${orgId}::uuid AND "calls" = 0)
           + (SELECT count(*) FROM "UsageTeamToolTagMonthRollup" WHERE "orgId" = ${orgId}::uuid AND "calls" = 0) AS n`;
    expect(emptied.n).toBe(0n);
  });

  it('should stay equal to the ledger after the org’s zone changes, before and after the rollups are rebuilt', async () => {
    await prisma.organization.update({ where: { id: orgId }, data: { timeZone: 'Asia/Tokyo' } });
    // New calls after the change: the trigger marks the rollups as of another zone.
    for (let i = 200; i < 230; i++) written.push(event(i));
    await ledger.writeUsageEvents(written.slice(200));
    expect((await prisma.usageRollupCoverage.findUnique({ where: { orgId } }))?.timeZone).toBeNull();
    for (const groupBy of BREAKDOWNS) await expectReportEqualsLedger('Asia/Tokyo', groupBy);
    // Stale rollups: the ledger answers, filters included.
    for (const [groupBy, filters, tag] of FILTERED) await expectReportEqualsLedger('Asia/Tokyo', groupBy, tag, filters);

    expect(await rollups.rebuildStaleReportRollups(null)).toEqual([orgId]);
    expect((await prisma.usageRollupCoverage.findUnique({ where: { orgId } }))?.timeZone).toBe('Asia/Tokyo');
    for (const groupBy of BREAKDOWNS) await expectReportEqualsLedger('Asia/Tokyo', groupBy);
    for (const [groupBy, filters, tag] of FILTERED) await expectReportEqualsLedger('Asia/Tokyo', groupBy, tag, filters);
    await expectReportEqualsLedger('Asia/Tokyo', ['day'], 'project:a');
    await expectMonthRowsEqualLedger('Asia/Tokyo');
  });
});
