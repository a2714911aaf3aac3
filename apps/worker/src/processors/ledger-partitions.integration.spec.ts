import { randomUUID } from 'node:crypto';
import { loadWorkerConfig } from '@tollgate/config';
import { ledgerSpend, Prisma, PrismaService, SpendScope, SpendWindow } from '@tollgate/db';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerPartitionsService, LedgerService, RefusedCall, UsageEvent, traceIdOf, utcMonth } from '@tollgate/usage';

/** The partitioned ledger and its retention on a real Postgres (the migrations as deployed). */
describe('ledger partitions and retention', () => {
  let env: TestEnv;
  let prisma: PrismaService;
  let ledger: LedgerService;
  let partitions: LedgerPartitionsService;

  beforeAll(async () => {
    env = await createTestEnv();
    prisma = new PrismaService(loadWorkerConfig(env.vars));
    ledger = new LedgerService(prisma);
    partitions = new LedgerPartitionsService(prisma);
  });

  afterAll(async () => {
    await prisma?.onApplicationShutdown();
    await env?.cleanup();
  });

  async function newOrg(timeZone: string) {
    const org = await prisma.organization.create({ data: { name: 'o', slug: `o-${randomUUID()}`, timeZone } });
    const keys = [0, 1, 2].map((k) => ({ keyId: randomUUID(), teamId: k === 2 ? 'b' : 'a', userId: randomUUID() }));
    const teams = { a: randomUUID(), b: randomUUID() };
    return { orgId: org.id, keys: keys.map((k) => ({ ...k, teamId: teams[k.teamId as 'a' | 'b'] })), teams };
  }

  function event(orgId: string, key: { keyId: string; teamId: string; userId: string }, at: Date, cost: bigint) {
    return {
      id: randomUUID(),
      orgId,
      ...key,
      upstreamId: '00000000-0000-4000-8000-000000000001',
      toolName: 'echo',
      outcome: 'OK',
      costMicros: cost,
      inputTokens: 0,
      outputTokens: 1,
      latencyMs: 1,
      priceRuleId: null,
      occurredAt: at,
    } satisfies UsageEvent;
  }

  async function partitionOf(id: string): Promise<string> {
    const [row] = await prisma.$queryRaw<{ part: string }[]>`
      SELECT tableoid::regclass::text AS part FROM "UsageEvent" WHERE "id" = ${id}`;
    return row.part;
  }

  it('should create months ahead, keep a row of a month without partition in the default one and move it when the month is made', async () => {
    const made = await partitions.ensureAhead(new Date('2031-01-15T00:00:00Z'), 2);
    expect(made).toEqual(['UsageEvent_p2031_01', 'UsageEvent_p2031_02', 'UsageEvent_p2031_03']);
    // Again, from two callers at once: nothing new, no error.
    await Promise.all([
      partitions.ensureAhead(new Date('2031-01-15T00:00:00Z'), 2),
      partitions.ensureAhead(new Date('2031-01-15T00:00:00Z'), 2),
    ]);

    const { orgId, keys } = await newOrg('UTC');
    const inMarch = event(orgId, keys[0], new Date('2031-03-31T23:59:59.999Z'), 7n);
    const inMay = event(orgId, keys[0], new Date('2031-05-01T00:00:00Z'), 11n);
    expect(await ledger.writeUsageEvents([inMarch, inMay])).toBe(2);
    expect(await partitionOf(inMarch.id)).toBe('"UsageEvent_p2031_03"');
    expect(await partitionOf(inMay.id)).toBe('"UsageEvent_default"');

    await partitions.ensureAhead(new Date('2031-05-02T00:00:00Z'), 0);
    expect(await partitionOf(inMay.id)).toBe('"UsageEvent_p2031_05"');
    // Written once, whichever partition it is in; the move did not count it in the rollups again.
    expect(await ledger.writeUsageEvents([inMarch, inMay])).toBe(0);
    const total = await ledgerSpend(prisma, { orgId, scope: 'ORG', scopeId: orgId, start: new Date(0), end: null });
    expect(total).toEqual({ micros: 18n, source: 'total' });
  });

  it('should write every column of a batch as given, whatever characters its text holds (property)', async () => {
    const { orgId, keys } = await newOrg('UTC');
    // Characters an array literal treats specially, the word NULL, and some beyond ASCII.
    const char = fc.constantFrom('"', '\\', '{', '}', ',', ' ', "'", '\n', 'N', 'U', 'L', 'x', 'é', '😀');
    const row = fc.record({
      toolName: fc.string({ unit: char, maxLength: 12 }),
      priceRuleId: fc.option(fc.uuid(), { nil: null }),
      traced: fc.boolean(),
      costMicros: fc.bigInt({ min: 0n, max: 10n ** 12n }),
      latencyMs: fc.nat({ max: 600_000 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 8 }), async (rows) => {
        const events = rows.map((r, i) => ({
          ...event(orgId, keys[i % keys.length], new Date(Date.UTC(2026, 10, 1, 0, 0, i, 7)), r.costMicros),
          toolName: r.toolName,
          priceRuleId: r.priceRuleId,
          latencyMs: r.latencyMs,
          traceparent: r.traced ? `00-${randomUUID().replace(/-/g, '')}-00f067aa0ba902b7-01` : null,
        }));
        expect(await ledger.writeUsageEvents(events)).toBe(events.length);
        const got = await prisma.usageEvent.findMany({ where: { id: { in: events.map((e) => e.id) } } });
        const byId = new Map(got.map((g) => [g.id, g]));
        for (const e of events) {
          const g = byId.get(e.id)!;
          expect([g.toolName, g.priceRuleId, g.costMicros, g.latencyMs, g.occurredAt, g.traceId]).toEqual([
            e.toolName,
            e.priceRuleId,
            e.costMicros,
            e.latencyMs,
            e.occurredAt,
            traceIdOf(e.traceparent),
          ]);
          expect([g.teamId, g.userId, g.keyId, g.inputTokens, g.outputTokens, g.outcome]).toEqual([
            e.teamId,
            e.userId,
            e.keyId,
            e.inputTokens,
            e.outputTokens,
            e.outcome,
          ]);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('should create a new month once, without an error, when workers ask for it at the same moment', async () => {
    // Hold the creation lock, let three callers queue behind it, then let them go: the first creates
    // the month, the others find it (a worker booting beside another exited on "already exists").
    const LOCK = Prisma.sql`hashtextextended('tollgate:partition:UsageEvent', 0)`;
    const blocker = await prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${LOCK})`;
      const callers = [0, 1, 2].map(() => partitions.ensureAhead(new Date('2033-06-10T00:00:00Z'), 0));
      for (;;) {
        const [{ waiting }] = await tx.$queryRaw<{ waiting: number }[]>`
          SELECT count(*)::int AS waiting FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
        if (waiting >= 3) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      return callers;
    });
    expect(await Promise.all(blocker)).toEqual([
      ['UsageEvent_p2033_06'],
      ['UsageEvent_p2033_06'],
      ['UsageEvent_p2033_06'],
    ]);
    expect(await partitions.months()).toContain('2033-06-01');
  });

  it('should keep every budget, and every running total, equal to the sum of its events when retention drops months (property)', async () => {
    const months = ['2030-01-01', '2030-02-01', '2030-03-01', '2030-04-01', '2030-05-01', '2030-06-01', '2030-07-01'];
    const now = new Date('2030-07-20T12:00:00Z');
    const keepMonths = 4; // keeps March to June (and July, the current month): January and February go
    const arbEvent = fc.record({
      month: fc.integer({ min: 0, max: months.length - 1 }),
      // Anywhere in the month, first and last millisecond included.
      at: fc.oneof(fc.constant(0), fc.constant(1), fc.integer({ min: 0, max: 27 * 86_400_000 }), fc.constant(-1)),
      key: fc.integer({ min: 0, max: 2 }),
      cost: fc.oneof(fc.constant(0n), fc.constant(1n), fc.bigInt({ min: 0n, max: 10n ** 15n })),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(arbEvent, { minLength: 1, maxLength: 40 }),
        fc.constantFrom('UTC', 'America/New_York', 'Asia/Kolkata'),
        // Events delivered again (a retry, a take-over): by index, in a batch of their own.
        fc.array(fc.nat(), { maxLength: 10 }),
        async (specs, zone, again) => {
          // Months dropped by an earlier run are made again (rows of theirs in the default partition move in).
          for (const m of months) await partitions.ensureAhead(new Date(`${m}T00:00:00Z`), 0);
          const { orgId, keys, teams } = await newOrg(zone);
          const events = specs.map((s) => {
            const start = Date.parse(`${months[s.month]}T00:00:00Z`);
            const end = Date.parse(`${utcMonth(new Date(start), 1)}T00:00:00Z`);
            const at = s.at === -1 ? end - 1 : start + s.at;
            return event(orgId, keys[s.key], new Date(at), s.cost);
          });
          await ledger.writeUsageEvents(events);
          await ledger.writeUsageEvents(again.map((i) => events[i % events.length]));

          // Budgets: all of history, and this month and last month in the org's calendar.
          const windows: SpendWindow[] = [];
          const scopes: [SpendScope, string][] = [
            ['ORG', orgId],
            ['TEAM', teams.a],
            ['TEAM', teams.b],
            ...keys.flatMap((k) => [
              ['USER', k.userId] as [SpendScope, string],
              ['KEY', k.keyId] as [SpendScope, string],
            ]),
          ];
          const local = DateTime.fromJSDate(now, { zone });
          const periods = [
            { start: new Date(0), end: null },
            { start: local.startOf('month').toJSDate(), end: local.startOf('month').plus({ months: 1 }).toJSDate() },
            { start: local.startOf('month').minus({ months: 1 }).toJSDate(), end: local.startOf('month').toJSDate() },
          ];
          for (const [scope, scopeId] of scopes) for (const p of periods) windows.push({ orgId, scope, scopeId, ...p });
          const column = { ORG: 'orgId', TEAM: 'teamId', USER: 'userId', KEY: 'keyId' } as const;
          const model = (w: SpendWindow) =>
            events
              .filter(
                (e) => e[column[w.scope]] === w.scopeId && e.occurredAt >= w.start && (!w.end || e.occurredAt < w.end),
              )
              .reduce((sum, e) => sum + e.costMicros, 0n);
          const spend = async () => Promise.all(windows.map(async (w) => (await ledgerSpend(prisma, w)).micros));
          // All of history is the scope's running total, one row (what a TOTAL budget reads).
          const totals = async () => {
            const rows = await prisma.usageScopeTotal.findMany({ where: { orgId } });
            return Object.fromEntries(rows.map((r) => [`${r.scope}:${r.scopeId}`, r.costMicros]));
          };
          const allTime = windows.filter((w) => w.end === null);
          const modelTotals = Object.fromEntries(
            allTime
              .filter((w) => events.some((e) => e[column[w.scope]] === w.scopeId))
              .map((w) => [`${w.scope}:${w.scopeId}`, model(w)]),
          );
          expect((await ledgerSpend(prisma, allTime[0])).source).toBe('total');

          expect(await spend()).toEqual(windows.map(model));
          expect(await totals()).toEqual(modelTotals);
          const dropped = await partitions.applyRetention(now, keepMonths);
          // (Months of the real calendar the migration made are older still, and go in the first run.)
          expect(dropped.map((d) => d.month).filter((m) => m >= '2030')).toEqual(['2030-01-01', '2030-02-01']);
          expect(await spend()).toEqual(windows.map(model));
          expect(await totals()).toEqual(modelTotals);
          // The dropped months' rows are gone from the ledger; the rest are all there.
          const kept = await prisma.usageEvent.count({ where: { orgId } });
          expect(kept).toBe(events.filter((e) => e.occurredAt >= new Date('2030-03-01T00:00:00Z')).length);
          expect(await partitions.months()).not.toContain('2030-02-01');
          // The tool-by-tag rollup lost what the per-key one lost: same sums per day, upstream and tool.
          const perTool = (table: string) =>
            prisma.$queryRawUnsafe<{ g: string; calls: bigint; cost: bigint }[]>(
              `SELECT "day"::text || "upstreamId"::text || "toolName" AS g, sum("calls")::bigint AS calls, sum("costMicros")::bigint AS cost
               FROM "${table}" WHERE "orgId" = $1::uuid AND "calls" <> 0 GROUP BY 1 ORDER BY 1`,
              orgId,
            );
          expect(await perTool('UsageToolTagDayRollup')).toEqual(await perTool('UsageCallDayRollup'));
          // Its month rows too: the day rows' sums per month, tag set, upstream and tool, no emptied row left.
          const perMonth = (table: string, month: string) =>
            prisma.$queryRawUnsafe<{ g: string; calls: bigint; cost: bigint }[]>(
              `SELECT ${month}::text || "upstreamId"::text || "toolName" || "tags"::text AS g, sum("calls")::bigint AS calls, sum("costMicros")::bigint AS cost
               FROM "${table}" WHERE "orgId" = $1::uuid GROUP BY 1 ORDER BY 1`,
              orgId,
            );
          expect(await perMonth('UsageToolTagMonthRollup', '"month"')).toEqual(
            await perMonth('UsageToolTagDayRollup', `date_trunc('month', "day")::date`),
          );
          // The team rows likewise: per day, team, upstream and tool as the per-key rows, months as their
          // days, no emptied row left.
          const perTeamTool = (table: string, period = '"day"') =>
            prisma.$queryRawUnsafe<{ g: string; calls: bigint; cost: bigint }[]>(
              `SELECT ${period}::text || "teamId"::text || "upstreamId"::text || "toolName" AS g, sum("calls")::bigint AS calls, sum("costMicros")::bigint AS cost
               FROM "${table}" WHERE "orgId" = $1::uuid AND "calls" <> 0 GROUP BY 1 ORDER BY 1`,
              orgId,
            );
          expect(await perTeamTool('UsageTeamToolTagDayRollup')).toEqual(await perTeamTool('UsageCallDayRollup'));
          expect(await perTeamTool('UsageTeamToolTagMonthRollup', '"month"')).toEqual(
            await perTeamTool('UsageTeamToolTagDayRollup', `date_trunc('month', "day")::date`),
          );
          // The per-key-and-tool month rows: the day rows' sums per month, key and tool; the per-user ones
          // per month, user, team and tool (a user's keys summed).
          const byKey = '"keyId"::text || "teamId"::text || "userId"::text';
          const byUser = '"userId"::text || "teamId"::text';
          const perCall = (table: string, period: string, keys = byKey) =>
            prisma.$queryRawUnsafe<{ g: string; calls: bigint; cost: bigint }[]>(
              `SELECT ${period}::text || ${keys} || "upstreamId"::text || "toolName" AS g,
                      sum("calls")::bigint AS calls, sum("costMicros")::bigint AS cost
               FROM "${table}" WHERE "orgId" = $1::uuid GROUP BY 1 ORDER BY 1`,
              orgId,
            );
          const dekadOfDay = `(date_trunc('month', "day")::date + LEAST((extract(day FROM "day")::int - 1) / 10, 2) * 10)`;
          for (const [table, period, keys] of [
            ['UsageCallMonthRollup', 'month', byKey],
            ['UsageCallDekadRollup', 'dekad', byKey],
            ['UsageUserCallMonthRollup', 'month', byUser],
            ['UsageUserCallDekadRollup', 'dekad', byUser],
          ])
            expect(await perCall(table, `"${period}"`, keys), table).toEqual(
              await perCall(
                'UsageCallDayRollup',
                period === 'month' ? `date_trunc('month', "day")::date` : dekadOfDay,
                keys,
              ),
            );
          const [emptied] = await prisma.$queryRaw<{ n: bigint }[]>`
            SELECT (SELECT count(*) FROM "UsageTeamToolTagDayRollup" WHERE "orgId" = ${orgId}::uuid AND "calls" = 0)
                 + (SELECT count(*) FROM "UsageTeamToolTagMonthRollup" WHERE "orgId" = ${orgId}::uuid AND "calls" = 0)
                 + (SELECT count(*) FROM "UsageCallMonthRollup" WHERE "orgId" = ${orgId}::uuid AND "calls" = 0)
                 + (SELECT count(*) FROM "UsageCallDekadRollup" WHERE "orgId" = ${orgId}::uuid AND "calls" = 0)
                 + (SELECT count(*) FROM "UsageUserCallMonthRollup" WHERE "orgId" = ${orgId}::uuid AND "calls" = 0)
                 + (SELECT count(*) FROM "UsageUserCallDekadRollup" WHERE "orgId" = ${orgId}::uuid AND "calls" = 0) AS n`;
          expect(emptied.n).toBe(0n);
        },
      ),
      { numRuns: 12 },
    );
    // Each drop is on record, with its rows and money, for reports over those months.
    const record = await prisma.usageLedgerRetention.findMany({
      where: { month: { gte: new Date('2030-01-01T00:00:00Z') } },
      orderBy: { month: 'asc' },
    });
    expect(record.map((r) => r.month.toISOString().slice(0, 10))).toEqual(['2030-01-01', '2030-02-01']);
  });

  it('should archive a dropped month to the table the operator names', async () => {
    await partitions.ensureAhead(new Date('2029-06-01T00:00:00Z'), 0);
    const { orgId, keys } = await newOrg('UTC');
    const e = event(orgId, keys[1], new Date('2029-06-10T00:00:00Z'), 42n);
    await ledger.writeUsageEvents([e]);
    const [dropped] = await partitions.applyRetention(new Date('2029-11-01T00:00:00Z'), 4, 'ledger_archive');
    expect(dropped).toMatchObject({ month: '2029-06-01', archivedTo: 'ledger_archive' });
    const archived = await prisma.$queryRaw<{ id: string; cost: bigint }[]>`
      SELECT "id", "costMicros" AS cost FROM "ledger_archive" WHERE "orgId" = ${orgId}::uuid`;
    expect(archived).toEqual([{ id: e.id, cost: 42n }]);
    expect(await prisma.usageEvent.count({ where: { id: e.id } })).toBe(0);
    const total = await ledgerSpend(prisma, {
      orgId,
      scope: 'KEY',
      scopeId: keys[1].keyId,
      start: new Date(0),
      end: null,
    });
    expect(total.micros).toBe(42n);
  });

  it("should drop refused calls' months with the ledger's, their counts staying in the rollup", async () => {
    await partitions.ensureAhead(new Date('2027-05-01T00:00:00Z'), 1);
    const { orgId, keys } = await newOrg('UTC');
    const refused = (at: string, calls: number): RefusedCall => ({
      id: randomUUID(),
      orgId,
      ...keys[0],
      upstreamId: null,
      toolName: 'echo',
      code: 'POLICY_DENIED',
      budgetId: null,
      calls,
      latencyMs: 1,
      occurredAt: new Date(at),
    });
    // May and June have partitions; February (no partition made) is in the default one.
    const [feb, may, june] = [
      refused('2027-02-10T00:00:00Z', 2),
      refused('2027-05-10T00:00:00Z', 1),
      refused('2027-06-10T00:00:00Z', 3),
    ];
    expect(await ledger.writeRefusedCalls([feb, may, june])).toBe(3);

    await partitions.dropRefusedMonthsBefore('2027-06-01');

    const left = await prisma.$queryRaw<
      { id: string }[]
    >`SELECT "id" FROM "RefusedCall" WHERE "orgId" = ${orgId}::uuid`;
    expect(left).toEqual([{ id: june.id }]);
    const [exists] = await prisma.$queryRaw<{ may: boolean; june: boolean }[]>`
      SELECT to_regclass('"RefusedCall_p2027_05"') IS NOT NULL AS may, to_regclass('"RefusedCall_p2027_06"') IS NOT NULL AS june`;
    expect(exists).toEqual({ may: false, june: true });
    const [rollup] = await prisma.$queryRaw<{ calls: bigint }[]>`
      SELECT sum("calls")::bigint AS calls FROM "RefusedCallRollup" WHERE "orgId" = ${orgId}::uuid`;
    expect(rollup.calls).toBe(6n);
  });
});
