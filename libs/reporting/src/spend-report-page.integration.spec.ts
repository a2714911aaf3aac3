import { randomUUID } from 'node:crypto';
import { loadWorkerConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportDimension } from './spend-report';
import { pageSpendReport, ReportSort } from './spend-report-page';
import { MAX_REPORT_ROWS, SpendReportService } from './spend-report.service';

const DAY = '2028-04-10';
const UPSTREAMS = ['00000000-0000-4000-8000-000000000011', '00000000-0000-4000-8000-000000000012'];

/**
 * A page of a report numbered and cut in Postgres (spendReportPage) on real Postgres: the same rows,
 * subtotal lines, counts and totals as the whole report paged in Node (pageSpendReport), for every
 * page, breakdown and figure sort, with ties, and with two keys of one label (a group is a label).
 */
describe('a spend report page cut in Postgres', () => {
  let env: TestEnv;
  let prisma: PrismaService;
  let reports: SpendReportService;
  let orgId: string;

  beforeAll(async () => {
    env = await createTestEnv();
    prisma = new PrismaService(loadWorkerConfig(env.vars));
    reports = new SpendReportService(prisma);
    orgId = (await prisma.organization.create({ data: { name: 't', slug: `t-${randomUUID()}` } })).id;
    const teams = [
      await prisma.team.create({ data: { orgId, name: 'beta' } }),
      await prisma.team.create({ data: { orgId, name: 'alpha' } }),
    ];
    const users = [
      await prisma.user.create({ data: { orgId, email: 'zed@page.test' } }),
      await prisma.user.create({ data: { orgId, email: 'amy@page.test' } }),
      await prisma.user.create({ data: { orgId, email: 'bob@page.test' } }),
    ];
    // Keys 0 and 1 share a name and a prefix (one label, two ids); key 3 has no name (its id is its label).
    const keys = [
      { name: 'twin', prefix: 'tg_twin', tags: ['env:prod'] },
      { name: 'twin', prefix: 'tg_twin', tags: ['env:prod', 'project:x'] },
      { name: 'solo', prefix: 'tg_solo', tags: [] },
      { name: '', prefix: 'tg_anon', tags: ['project:x'] },
    ];
    const keyIds: string[] = [];
    for (const [i, k] of keys.entries())
      keyIds.push(
        (
          await prisma.virtualKey.create({
            data: {
              orgId,
              teamId: teams[i % 2].id,
              userId: users[i % 3].id,
              secretHash: randomUUID(),
              ...k,
            },
          })
        ).id,
      );
    // Each key calls a few tools on two upstreams; costs repeat so that figures tie.
    const events = [];
    for (const [k, keyId] of keyIds.entries())
      for (let t = 0; t < 5; t++)
        for (let c = 0; c <= (k + t) % 3; c++)
          events.push({
            id: randomUUID(),
            orgId,
            teamId: teams[k % 2].id,
            userId: users[k % 3].id,
            keyId,
            upstreamId: UPSTREAMS[t % 2],
            toolName: `tool_${t}`,
            outcome: (c === 1 ? 'TOOL_ERROR' : 'OK') as 'OK' | 'TOOL_ERROR',
            costMicros: BigInt(((k * 7 + t * 3) % 4) * 10),
            inputTokens: 0,
            outputTokens: c + 1,
            latencyMs: 1,
            occurredAt: new Date(`${DAY}T12:00:${String(c).padStart(2, '0')}.000Z`),
          });
    // One statement, as the worker writes a batch: the ledger's trigger keeps the rollups.
    await prisma.usageEvent.createMany({ data: events });
  });

  afterAll(async () => {
    await prisma?.onApplicationShutdown();
    await env?.cleanup();
  });

  const BREAKDOWNS: ReportDimension[][] = [
    ['key', 'tool'],
    ['user', 'tool'],
    ['team', 'user'],
    ['tool', 'tag'],
    ['tag', 'key'],
    ['upstream', 'team', 'key'],
    ['tool'],
    ['key'],
  ];
  const SORTS: (ReportSort | null)[] = [
    null,
    { column: 'costMicros', direction: 'desc' },
    { column: 'calls', direction: 'asc' },
    { column: 'errors', direction: 'desc' },
  ];

  /** Every page of `limit` lines (and one past the end) in Postgres, against the whole report paged in Node. */
  async function expectPagesAsNode(groupBy: ReportDimension[], sort: ReportSort | null, limit: number) {
    const whole = await reports.spendReport(orgId, DAY, DAY, groupBy);
    const first = pageSpendReport(whole, { offset: 0, limit, sort }).page;
    expect(first.totalRows).toBeGreaterThan(1);
    for (let offset = 0; offset <= first.totalLines; offset += limit) {
      const inNode = pageSpendReport(whole, { offset, limit, sort }).page;
      const inSql = await reports.spendReportPage(orgId, DAY, DAY, groupBy, { offset, limit, sort });
      expect(inSql, `${groupBy.join(',')} ${sort?.column ?? ''} ${offset}+${limit}`).not.toBeNull();
      expect(inSql!.page, `${groupBy.join(',')} ${sort?.column ?? ''} ${offset}+${limit}`).toEqual(inNode);
      expect(inSql!.report.totals).toEqual(whole.totals);
      expect(inSql!.report.rows).toEqual(inNode.rows);
    }
  }

  it('should give every page the rows, subtotal lines and totals the whole report paged gives, with each sort on a figure', async () => {
    for (const groupBy of BREAKDOWNS) for (const sort of SORTS) await expectPagesAsNode(groupBy, sort, 3);
  });

  it('should group a page’s subtotals by label: two keys of one name and prefix are one group', async () => {
    const whole = await reports.spendReport(orgId, DAY, DAY, ['key', 'tool']);
    const { page } = (await reports.spendReportPage(orgId, DAY, DAY, ['key', 'tool'], {
      offset: 0,
      limit: 1000,
      sort: null,
    }))!;
    expect(page.subtotals.map((s) => s.group)).toContain('twin (tg_twin)');
    expect(page.subtotals).toHaveLength(3);
    expect(page.totalLines).toBe(whole.rows.length + 3);
  });

  it('should leave pages in Node where they need every row: by day, or sorted on a name', async () => {
    const page = { offset: 0, limit: 5 };
    expect(await reports.spendReportPage(orgId, DAY, DAY, ['tool', 'day'], { ...page, sort: null })).toBeNull();
    expect(
      await reports.spendReportPage(orgId, DAY, DAY, ['key', 'tool'], {
        ...page,
        sort: { column: 'tool', direction: 'asc' },
      }),
    ).toBeNull();
    expect(await reports.spendReportPage(orgId, DAY, DAY, [], { ...page, sort: null })).toBeNull();
  });

  // The org moves to another zone, whose rollups are not built, so reports read the ledger; and back.
  it('should page a report read from the ledger itself the same way', async () => {
    await prisma.organization.update({ where: { id: orgId }, data: { timeZone: 'Asia/Tokyo' } });
    try {
      expect((await reports.spendReport(orgId, DAY, DAY, ['tool'])).timeZone).toBe('Asia/Tokyo');
      await expectPagesAsNode(['key', 'tool'], null, 4);
      await expectPagesAsNode(['team', 'user'], { column: 'costMicros', direction: 'desc' }, 2);
    } finally {
      await prisma.organization.update({ where: { id: orgId }, data: { timeZone: 'UTC' } });
    }
  });

  it('should answer a page of a report of more than MAX_REPORT_ROWS rows, which the whole report refuses', async () => {
    const big = (await prisma.organization.create({ data: { name: 'big', slug: `big-${randomUUID()}` } })).id;
    const rows = MAX_REPORT_ROWS + 1;
    // One call of each of MAX_REPORT_ROWS + 1 tools, in one statement as the worker writes a batch.
    await prisma.$executeRaw`
      INSERT INTO "UsageEvent" ("id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "outcome",
                                "costMicros", "outputTokens", "latencyMs", "occurredAt")
      SELECT gen_random_uuid()::text, ${big}::uuid, ${randomUUID()}::uuid, ${randomUUID()}::uuid, ${randomUUID()}::uuid,
             ${UPSTREAMS[0]}::uuid, 'tool_' || lpad(g::text, 6, '0'), 'OK', 3, 1, 1, ${new Date(`${DAY}T12:00:00Z`)}
      FROM generate_series(1, ${rows}::int) g`;
    await expect(reports.spendReport(big, DAY, DAY, ['tool'])).rejects.toMatchObject({ code: 'REPORT_TOO_LARGE' });
    const second = await reports.spendReportPage(big, DAY, DAY, ['tool'], { offset: 50, limit: 50, sort: null });
    expect(second!.page).toMatchObject({ offset: 50, limit: 50, totalRows: rows, totalLines: rows });
    expect(second!.page.rows.map((r) => r.toolName)).toEqual(
      Array.from({ length: 50 }, (_, i) => `tool_${String(51 + i).padStart(6, '0')}`),
    );
    expect(second!.report.totals).toMatchObject({ calls: BigInt(rows), costMicros: BigInt(3 * rows) });
  });
});
