import { randomUUID } from 'node:crypto';
import { loadWorkerConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { DateTime } from 'luxon';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MONTHLY_ROLLUPS,
  rangeCover,
  ReportDimension,
  SpendFilters,
  SpendReportService,
  zonedDayRange,
} from '@tollgate/reporting';
import { createLedgerOrg, LedgerOrg } from './ledger-fixture';

const ZONE = 'America/Sao_Paulo';
// Fixed past days, whatever today is: calls every day from June 1 to August 13 2026, the last as
// "today" (no calls after it).
const FIRST_DAY = '2026-06-01';
const LAST_DAY = '2026-08-13';
// The last 30 days up to each of these: ranges whose edge months end or start on every kind of day.
const LAST_DAYS = ['2026-07-01', '2026-07-11', '2026-07-13', '2026-07-21', '2026-07-27', '2026-07-31', LAST_DAY];
const TOOLS = 40;

/**
 * The per-key-and-tool rollup's reports without days read a range as months whole, dekads (days
 * 1-10, 11-20, 21 to the end) whole, and day rows, or a period less its rows outside the range,
 * whichever reads fewer rows by the tables' row estimates (rangeCover). Here on fixed past dates,
 * with the estimates counted by ANALYZE (so the plan is the same on any day), on a ledger shaped as
 * the bench's (a key's tools drift from day to day: a dekad's rows weigh ~3 days of day rows, a
 * month's ~8): the plans of the 11th and the 13th use dekads, and users, keys and a user's tools by
 * tool over the last 30 days up to the 1st, 11th, 13th, 21st, 27th and 31st of a month, and up to
 * "today", equal the ledger's own GROUP BY over the range (users by tool, teams' users by upstream
 * and a user's tools read the per-user month and dekad rows with the per-key day rows).
 */
describe('a spend report reading edge months by their dekads', () => {
  let env: TestEnv;
  let prisma: PrismaService;
  let reports: SpendReportService;
  let db: Client;
  let org: LedgerOrg;

  beforeAll(async () => {
    env = await createTestEnv();
    prisma = new PrismaService(loadWorkerConfig(env.vars));
    reports = new SpendReportService(prisma);
    db = new Client({ connectionString: env.vars.DATABASE_URL });
    await db.connect();
    org = await createLedgerOrg(db, 'Dekad', ZONE);
    const events = [];
    let n = 0;
    const first = DateTime.fromISO(FIRST_DAY, { zone: 'utc' });
    for (let day = first; day.toISODate()! <= LAST_DAY; day = day.plus({ days: 1 })) {
      const d = day.diff(first, 'days').days;
      for (const key of [0, 1, 2, 3])
        for (let j = 0; j < 4; j++, n++)
          events.push({
            id: randomUUID(),
            orgId: org.orgId,
            teamId: org.teams[key % 2],
            userId: org.users[key % 3],
            keyId: org.keys[key],
            upstreamId: org.upstreams[key % 2],
            // Four tools a day, one new each day: a key's tools over a dekad are 13, over a month 33.
            toolName: `tool_${(d + 7 * key + j) % TOOLS}`,
            outcome: n % 5 === 0 ? ('TOOL_ERROR' as const) : ('OK' as const),
            costMicros: BigInt(100 + ((n * 7919) % 900)),
            inputTokens: 0,
            outputTokens: (n * 31) % 70,
            latencyMs: 1,
            // 15:00 UTC is noon in São Paulo: the same local day.
            occurredAt: day.set({ hour: 15, minute: key * 4 + j }).toJSDate(),
          });
    }
    // One statement, as the worker writes a batch: the ledger's trigger fills the day, dekad and month rows.
    await prisma.usageEvent.createMany({ data: events });
    await db.query(
      `ANALYZE "UsageCallDayRollup", "UsageCallDekadRollup", "UsageCallMonthRollup", "UsageUserCallDekadRollup", "UsageUserCallMonthRollup"`,
    );
  });

  afterAll(async () => {
    await db?.end();
    await prisma?.onApplicationShutdown();
    await env?.cleanup();
  });

  const last30 = (to: string) => DateTime.fromISO(to).minus({ days: 29 }).toISODate()!;

  it('should read the 13th’s and the 11th’s last 30 days from dekads, not from two or three weeks of day rows', async () => {
    const rollup = MONTHLY_ROLLUPS.callDays!;
    // "Today" the 13th: August whole (no calls after today), July's last dekad whole and 6 days.
    expect(await rangeCover(db, rollup, org.orgId, zonedDayRange(last30(LAST_DAY), LAST_DAY, ZONE))).toEqual({
      plus: { months: ['2026-08-01'], dekads: ['2026-07-21'], days: [['2026-07-15', '2026-07-20']] },
      minus: { months: [], dekads: [], days: [] },
    });
    // Up to July 11 with calls after it: June's last two dekads (the first less June 11), July's first
    // dekad and the 11th.
    expect(await rangeCover(db, rollup, org.orgId, zonedDayRange(last30('2026-07-11'), '2026-07-11', ZONE))).toEqual({
      plus: {
        months: [],
        dekads: ['2026-06-11', '2026-06-21', '2026-07-01'],
        days: [['2026-07-11', '2026-07-11']],
      },
      minus: { months: [], dekads: [], days: [['2026-06-11', '2026-06-11']] },
    });
  });

  const GROUPS: Record<string, string> = { user: 'userId', key: 'keyId', upstream: 'upstreamId', tool: 'toolName' };
  // Users by tool and a user's tools read the per-user month and dekad rows (and the per-key day rows).
  const CASES: [ReportDimension[], Partial<SpendFilters>][] = [
    [['user', 'tool'], {}],
    [['user', 'tool'], { teamId: [] }],
    [['user', 'upstream'], {}],
    [['key', 'tool'], {}],
    [['tool'], { userId: [] }],
    [['key'], { tool: ['tool_3', 'tool_17'] }],
  ];

  /** The ledger's own sums over the range's local days by the report's columns, as `a|b|...|calls|errors|tokens|cost` lines. */
  async function ledgerLines(groupBy: ReportDimension[], filters: Partial<SpendFilters>, from: string, to: string) {
    const columns = [...new Set(groupBy.flatMap((d) => (d === 'tool' ? ['upstreamId', 'toolName'] : [GROUPS[d]])))];
    const group = columns.map((c) => `e."${c}"`).join(', ');
    const { rows } = await db.query<{ line: string }>(
      `SELECT concat_ws('|', ${group}, count(*), count(*) FILTER (WHERE e."outcome" <> 'OK'), sum(e."outputTokens"), sum(e."costMicros")) AS line
       FROM "UsageEvent" e
       WHERE e."orgId" = $1 AND ((e."occurredAt" AT TIME ZONE 'UTC') AT TIME ZONE '${ZONE}')::date BETWEEN $2::date AND $3::date
         AND ($4::uuid[] IS NULL OR e."userId" = ANY($4)) AND ($5::text[] IS NULL OR e."toolName" = ANY($5))
         AND ($6::uuid[] IS NULL OR e."teamId" = ANY($6))
       GROUP BY ${group}`,
      [org.orgId, from, to, filters.userId ?? null, filters.tool ?? null, filters.teamId ?? null],
    );
    return { columns, lines: rows.map((r) => r.line).sort() };
  }

  it.each(LAST_DAYS)('should report the last 30 days up to %s as the ledger’s sums, every breakdown', async (to) => {
    const from = last30(to);
    for (const [groupBy, given] of CASES) {
      const filters = given.userId ? { userId: [org.users[1]] } : given.teamId ? { teamId: [org.teams[1]] } : given;
      const report = await reports.spendReport(org.orgId, from, to, groupBy, { filters });
      const { columns, lines } = await ledgerLines(groupBy, filters, from, to);
      expect(lines.length, `${groupBy.join(',')} has rows`).toBeGreaterThan(0);
      const got = report.rows
        .map((r) => {
          const f = r.figures;
          return [...columns.map((c) => r[c]), f.calls, f.errors, f.outputTokens, f.costMicros].join('|');
        })
        .sort();
      expect(got, `${groupBy.join(',')} ${JSON.stringify(filters)}`).toEqual(lines);
    }
  });
});
