import { randomUUID } from 'node:crypto';
import { loadWorkerConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportingException } from './reporting.exception';
import { addFigures, ReportDimension, SpendFigures, SpendReport, zeroFigures } from './spend-report';
import { MAX_REPORT_ROWS, SpendReportService } from './spend-report.service';

const DAY = '2028-03-10';
const EMPTY_DAY = '2028-03-12';
const UPSTREAM = '00000000-0000-4000-8000-000000000001';

/**
 * A report bounded by `top` on real Postgres: the costliest rows (ties: more calls, then the report's
 * order), the rest counted and summed in `remainder`, totals the ledger's whatever is left out;
 * from the rollups and from the ledger itself (rollups of another zone) alike.
 */
describe('a spend report bounded to its costliest rows', () => {
  let env: TestEnv;
  let prisma: PrismaService;
  let reports: SpendReportService;
  let orgId: string;
  // tool_0 .. tool_4 cost 10, 20, 30, 40, 50 in one call each; tool_5 costs 50 in two calls (ranked
  // before tool_4: the same cost, more calls); tool_6 has only free calls.
  const tools: { name: string; costs: number[]; key: number }[] = [
    { name: 'tool_0', costs: [10], key: 0 },
    { name: 'tool_1', costs: [20], key: 1 },
    { name: 'tool_2', costs: [30], key: 2 },
    { name: 'tool_3', costs: [40], key: 0 },
    { name: 'tool_4', costs: [50], key: 1 },
    { name: 'tool_5', costs: [20, 30], key: 2 },
    { name: 'tool_6', costs: [0, 0, 0], key: 0 },
  ];
  // Ranked: tool_5 (50, 2 calls), tool_4 (50, 1 call), tool_3, tool_2, tool_1, tool_0, tool_6 (0).
  const ranked = ['tool_5', 'tool_4', 'tool_3', 'tool_2', 'tool_1', 'tool_0', 'tool_6'];
  const keyTags = [['env:prod'], ['env:prod', 'project:x'], []];
  const keyIds = keyTags.map(() => randomUUID());

  beforeAll(async () => {
    env = await createTestEnv();
    prisma = new PrismaService(loadWorkerConfig(env.vars));
    reports = new SpendReportService(prisma);
    orgId = (await prisma.organization.create({ data: { name: 't', slug: `t-${randomUUID()}` } })).id;
    const team = await prisma.team.create({ data: { orgId, name: 'team' } });
    const user = await prisma.user.create({ data: { orgId, email: 'u@top.test' } });
    for (const [i, tags] of keyTags.entries())
      await prisma.virtualKey.create({
        data: {
          id: keyIds[i],
          orgId,
          teamId: team.id,
          userId: user.id,
          name: `key-${i}`,
          prefix: `tg_top${i}`,
          secretHash: randomUUID(),
          tags,
        },
      });
    // One statement, as the worker writes a batch: the ledger's trigger keeps the rollups.
    await prisma.usageEvent.createMany({
      data: tools.flatMap((t) =>
        t.costs.map((cost, i) => ({
          id: randomUUID(),
          orgId,
          teamId: team.id,
          userId: user.id,
          keyId: keyIds[t.key],
          upstreamId: UPSTREAM,
          toolName: t.name,
          outcome: 'OK' as const,
          costMicros: BigInt(cost),
          inputTokens: 0,
          outputTokens: 1,
          latencyMs: 1,
          occurredAt: new Date(`${DAY}T12:00:0${i}.000Z`),
        })),
      ),
    });
  });

  afterAll(async () => {
    await prisma?.onApplicationShutdown();
    await env?.cleanup();
  });

  const sum = (figures: SpendFigures[]) => figures.reduce(addFigures, zeroFigures());
  const toolsOf = (r: SpendReport) => r.rows.map((row) => row.toolName);
  const byTool = (top?: number, from = DAY, to = DAY) =>
    reports.spendReport(orgId, from, to, ['tool'], top === undefined ? {} : { top });

  it('should keep the costliest rows in the report’s order and sum the rest, totals unchanged (N+1 rows, top N)', async () => {
    const all = await byTool();
    expect(all.remainder).toBeUndefined();
    expect(all.rows).toHaveLength(7);
    const top = await byTool(6);
    // The report's order (by tool), not the rank's.
    expect(toolsOf(top)).toEqual(ranked.slice(0, 6).sort());
    expect(top.remainder).toEqual({
      rows: 1,
      figures: { calls: 3n, errors: 0n, outputTokens: 3n, costMicros: 0n },
    });
    expect(top.totals).toEqual(all.totals);
    expect(addFigures(sum(top.rows.map((r) => r.figures)), top.remainder!.figures)).toEqual(all.totals);
    for (const row of top.rows) expect(row).toEqual(all.rows.find((r) => r.toolName === row.toolName));
  });

  it('should leave nothing out, and say so, when the report has exactly top rows or fewer', async () => {
    const all = await byTool();
    for (const n of [7, 8, MAX_REPORT_ROWS]) {
      const r = await byTool(n);
      expect(r.remainder).toBeNull();
      expect(r.rows).toEqual(all.rows);
      expect(r.totals).toEqual(all.totals);
    }
  });

  it('should rank ties by calls, then by the report’s order: top 1 and top 2', async () => {
    const one = await byTool(1);
    expect(toolsOf(one)).toEqual(['tool_5']);
    expect(one.remainder).toEqual({
      rows: 6,
      figures: { calls: 8n, errors: 0n, outputTokens: 8n, costMicros: 150n },
    });
    expect(one.totals.costMicros).toBe(200n);
    expect(toolsOf(await byTool(2))).toEqual(['tool_4', 'tool_5']);
  });

  it('should answer no rows and no remainder for a range without calls', async () => {
    const r = await byTool(3, EMPTY_DAY, EMPTY_DAY);
    expect(r.rows).toEqual([]);
    expect(r.remainder).toBeNull();
    expect(r.totals).toEqual(zeroFigures());
  });

  it('should sum tag rows in the remainder while totals count each call once', async () => {
    const all = await reports.spendReport(orgId, DAY, DAY, ['tag']);
    // env:prod (keys 0 and 1), project:x (key 1), none (key 2).
    expect(all.rows.map((r) => r.tag)).toEqual([null, 'env:prod', 'project:x']);
    const top = await reports.spendReport(orgId, DAY, DAY, ['tag'], { top: 1 });
    expect(top.rows.map((r) => r.tag)).toEqual(['env:prod']);
    expect(top.totals).toEqual(all.totals);
    expect(top.remainder).toEqual({
      rows: 2,
      figures: sum(all.rows.filter((r) => r.tag !== 'env:prod').map((r) => r.figures)),
    });
  });

  it('should bound a cross breakdown and a filtered one as it does one breakdown', async () => {
    const groupBy: ReportDimension[] = ['key', 'tool'];
    const all = await reports.spendReport(orgId, DAY, DAY, groupBy);
    const top = await reports.spendReport(orgId, DAY, DAY, groupBy, { top: 3 });
    expect(toolsOf(top).sort()).toEqual(['tool_3', 'tool_4', 'tool_5']);
    expect(top.remainder?.rows).toBe(all.rows.length - 3);
    expect(addFigures(sum(top.rows.map((r) => r.figures)), top.remainder!.figures)).toEqual(all.totals);
    const filtered = await reports.spendReport(orgId, DAY, DAY, ['tool'], {
      top: 1,
      filters: { keyId: [keyIds[0]] },
    });
    expect(toolsOf(filtered)).toEqual(['tool_3']);
    expect(filtered.remainder).toEqual({
      rows: 2,
      figures: { calls: 4n, errors: 0n, outputTokens: 4n, costMicros: 10n },
    });
  });

  it('should refuse a bound that is not a whole number from 1 to the row cap, naming top', async () => {
    for (const top of [0, -1, 1.5, MAX_REPORT_ROWS + 1]) {
      const err = await byTool(top).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ReportingException);
      expect(err).toMatchObject({ field: 'top' });
    }
  });

  // Last: it moves the org to another zone, whose rollups are not built, so reports read the ledger.
  it('should bound a report read from the ledger itself the same way', async () => {
    const fromRollups = await byTool(4);
    await prisma.organization.update({ where: { id: orgId }, data: { timeZone: 'Asia/Tokyo' } });
    const fromLedger = await byTool(4);
    expect(fromLedger.timeZone).toBe('Asia/Tokyo');
    expect(fromLedger.rows).toEqual(fromRollups.rows);
    expect(fromLedger.remainder).toEqual(fromRollups.remainder);
    expect(fromLedger.totals).toEqual(fromRollups.totals);
  });
});
