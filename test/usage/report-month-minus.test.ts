import { randomUUID } from 'node:crypto';
import { loadWorkerConfig } from '@tollgate/config';
import { Prisma, PrismaService } from '@tollgate/db';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { DateTime } from 'luxon';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MONTHLY_ROLLUPS,
  rangeCover,
  ReportDimension,
  SpendReport,
  SpendReportService,
  zonedDayRange,
} from '@tollgate/reporting';
import { createLedgerOrg, LedgerOrg } from './ledger-fixture';

const ZONE = 'Europe/Berlin';
// Fixed past months, whatever today is: calls every day of July to September 2026.
const FIRST_DAY = '2026-07-01';
const LAST_DAY = '2026-09-30';
// The range leaves out July 1-3 and September 28-30, which have calls: read as the three months'
// rows less those six days' day rows.
const FROM = '2026-07-04';
const TO = '2026-09-27';
const LEFT_OUT = ['2026-07-01', '2026-07-02', '2026-07-03', '2026-09-28', '2026-09-29', '2026-09-30'];
// Called by key 1 only on the left-out days: its groups sum to no calls after the subtraction.
const GONE_TOOL = 'tool_gone';
const KEY_TAGS = [['env:prod'], ['env:prod', 'team:x'], [], ['team:x']];

/**
 * A report whose range leaves out days of its edge months that have calls reads those months' rows
 * less the left-out days' day rows (rangeCover's `minus`). Here on fixed past dates, with the tables'
 * row estimates counted by ANALYZE (so the months' weight, and the plan, are the same on any day):
 * the plan must be `minus`, and users by tool, keys by tool and tools by tag must equal the ledger's
 * own GROUP BY over the range, without the groups whose calls were all on the left-out days.
 */
describe('a spend report reading edge months as month rows less the days outside its range', () => {
  let env: TestEnv;
  let prisma: PrismaService;
  let reports: SpendReportService;
  let db: Client;
  let orgId: string;
  let org: LedgerOrg;

  beforeAll(async () => {
    env = await createTestEnv();
    prisma = new PrismaService(loadWorkerConfig(env.vars));
    reports = new SpendReportService(prisma);
    db = new Client({ connectionString: env.vars.DATABASE_URL });
    await db.connect();
    org = await createLedgerOrg(db, 'Minus', ZONE, KEY_TAGS);
    orgId = org.orgId;
    const event = (day: DateTime, key: number, tool: string, n: number) => ({
      id: randomUUID(),
      orgId,
      teamId: org.teams[key % 2],
      userId: org.users[key % 3],
      keyId: org.keys[key],
      upstreamId: org.upstreams[key % 2],
      toolName: tool,
      outcome: n % 5 === 0 ? ('TOOL_ERROR' as const) : ('OK' as const),
      costMicros: BigInt(100 + ((n * 7919) % 900)),
      inputTokens: 0,
      outputTokens: (n * 31) % 70,
      latencyMs: 1,
      // 10:00 UTC is noon or 11:00 in Berlin: the same local day.
      occurredAt: day.set({ hour: 10, minute: key }).toJSDate(),
    });
    const events = [];
    let n = 0;
    for (
      let day = DateTime.fromISO(FIRST_DAY, { zone: 'utc' });
      day.toISODate()! <= LAST_DAY;
      day = day.plus({ days: 1 })
    ) {
      for (const key of [0, 1, 2, 3]) events.push(event(day, key, `tool_${(day.day + key) % 3}`, n++));
      if (LEFT_OUT.includes(day.toISODate()!)) events.push(event(day, 1, GONE_TOOL, n++));
    }
    // One statement, as the worker writes a batch: the ledger's trigger fills the day and month rows.
    await prisma.usageEvent.createMany({ data: events });
    // The planner's row estimates rangeCover weighs months by, counted now rather than when autovacuum gets to it.
    await db.query(
      `ANALYZE "UsageCallDayRollup", "UsageCallDekadRollup", "UsageCallMonthRollup", "UsageToolTagDayRollup", "UsageToolTagMonthRollup"`,
    );
  });

  afterAll(async () => {
    await db?.end();
    await prisma?.onApplicationShutdown();
    await env?.cleanup();
  });

  const localDay = `((e."occurredAt" AT TIME ZONE 'UTC') AT TIME ZONE '${ZONE}')::date`;
  const figures = `count(*), count(*) FILTER (WHERE e."outcome" <> 'OK'), sum(e."outputTokens"), sum(e."costMicros")`;
  const COLUMNS: Record<'user' | 'key', string> = { user: 'userId', key: 'keyId' };

  /** The ledger's own sums over the range's local days, by the report's breakdown, as `a|b|...|calls|errors|tokens|cost` lines. */
  async function ledgerLines(groupBy: ['user' | 'key', 'tool'] | ['tool', 'tag'], from = FROM, to = TO) {
    const byTag = groupBy[1] === 'tag';
    const group = byTag
      ? `e."upstreamId", e."toolName", tg."tag"`
      : `e."${COLUMNS[groupBy[0] as 'user' | 'key']}", e."upstreamId", e."toolName"`;
    const tags = byTag
      ? `JOIN "VirtualKey" k ON k."id" = e."keyId"
         CROSS JOIN LATERAL unnest(CASE WHEN cardinality(k."tags") = 0 THEN ARRAY[NULL]::text[] ELSE k."tags" END) AS tg("tag")`
      : '';
    const { rows } = await db.query<{ line: string }>(
      `SELECT concat_ws('|', ${group.replace('tg."tag"', `COALESCE(tg."tag", '-')`)}, ${figures}) AS line
       FROM "UsageEvent" e ${tags}
       WHERE e."orgId" = $1 AND ${localDay} BETWEEN $2::date AND $3::date GROUP BY ${group}`,
      [orgId, from, to],
    );
    return rows.map((r) => r.line).sort();
  }

  function reportLines(report: SpendReport, groupBy: ReportDimension[]) {
    const columns =
      groupBy[1] === 'tag'
        ? ['upstreamId', 'toolName', 'tag']
        : [COLUMNS[groupBy[0] as 'user' | 'key'], 'upstreamId', 'toolName'];
    return report.rows
      .map((r) => {
        const f = r.figures;
        return [...columns.map((c) => r[c] ?? '-'), f.calls, f.errors, f.outputTokens, f.costMicros].join('|');
      })
      .sort();
  }

  /** The rows of the report's aggregate (the SQL its rows, pages and cap are built on), on this client. */
  async function aggregateRows(groupBy: ReportDimension[]) {
    type Plan = { aggregate: (client: Client, cap: Prisma.Sql) => Promise<Prisma.Sql> };
    const planner = reports as unknown as {
      reportPlan(orgId: string, from: string, to: string, groupBy: ReportDimension[], opts: object): Promise<Plan>;
    };
    const sql = await (await planner.reportPlan(orgId, FROM, TO, groupBy, {})).aggregate(db, Prisma.empty);
    return (await db.query({ text: sql.text, values: sql.values })).rows;
  }

  it('should plan the range’s edge months as month rows less the left-out days, whatever the date', async () => {
    const range = zonedDayRange(FROM, TO, ZONE);
    for (const rollup of [MONTHLY_ROLLUPS.callDays!, MONTHLY_ROLLUPS.toolTagDays!])
      expect(await rangeCover(db, rollup, orgId, range), rollup.months).toEqual({
        plus: { months: ['2026-07-01', '2026-08-01', '2026-09-01'], dekads: [], days: [] },
        minus: {
          months: [],
          dekads: [],
          days: [
            ['2026-07-01', '2026-07-03'],
            ['2026-09-28', '2026-09-30'],
          ],
        },
      });
    // A few days amid a month: fewer day rows than a month's (or a dekad's) rows less the other days.
    expect(
      await rangeCover(db, MONTHLY_ROLLUPS.callDays!, orgId, zonedDayRange('2026-08-20', '2026-08-25', ZONE)),
    ).toEqual({
      plus: { months: [], dekads: [], days: [['2026-08-20', '2026-08-25']] },
      minus: { months: [], dekads: [], days: [] },
    });
  });

  it.each([[['user', 'tool']], [['key', 'tool']], [['tool', 'tag']]] as [['user' | 'key', 'tool'] | ['tool', 'tag']][])(
    'should report %j as the ledger’s sums over the range, without the groups called only on the left-out days',
    async (groupBy) => {
      const report = await reports.spendReport(orgId, FROM, TO, groupBy);
      const lines = reportLines(report, groupBy);
      expect(lines).toEqual(await ledgerLines(groupBy));
      // Key 1 called tool_gone on the left-out days only: in the month rows, then subtracted to nothing.
      expect(report.rows.filter((r) => r.toolName === GONE_TOOL)).toEqual([]);
      const { rows } = await db.query(`SELECT 1 FROM "UsageCallMonthRollup" WHERE "orgId" = $1 AND "toolName" = $2`, [
        orgId,
        GONE_TOOL,
      ]);
      expect(rows.length).toBeGreaterThan(0);
      // Nor is it a row of the aggregate, which MAX_REPORT_ROWS counts (the report drops rows of no
      // calls itself; the aggregate's HAVING keeps them from counting towards the cap).
      expect(await aggregateRows(groupBy)).toHaveLength(report.rows.length);
      // The three whole months' sums are other figures: the left-out days' calls were subtracted.
      expect(await ledgerLines(groupBy, FIRST_DAY, LAST_DAY)).not.toEqual(lines);
    },
  );
});
