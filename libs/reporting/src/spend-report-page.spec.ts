import { describe, expect, it } from 'vitest';
import { SpendRow } from './spend-report';
import { daysOf, pageOfLines, parseReportSort, perDaySeries, reportLines } from './spend-report-page';

const row = (teamName: string, day: string, costMicros: bigint): SpendRow =>
  ({
    teamId: `id-${teamName}`,
    teamName,
    day,
    figures: { calls: 1n, errors: 0n, outputTokens: 0n, costMicros },
  }) as unknown as SpendRow;

const rows = [row('api', '2026-11-01', 5n), row('api', '2026-11-02', 1n), row('web', '2026-11-01', 9n)];

describe('a spend report cut into pages', () => {
  it('should follow each group of the first breakdown with its subtotal, groups by subtotal when sorted on a figure', () => {
    const lines = reportLines(rows, ['team', 'day'], { column: 'costMicros', direction: 'desc' });
    expect(
      lines.map((l) =>
        l.kind === 'row' ? `${l.row.teamName} ${l.row.day}` : `sub ${l.group} ${l.figures.costMicros}`,
      ),
    ).toEqual(['web 2026-11-01', 'sub web 9', 'api 2026-11-01', 'api 2026-11-02', 'sub api 6']);
  });

  it('should place a subtotal that opens a page before its first row', () => {
    const lines = reportLines(rows, ['team', 'day'], null);
    const page = pageOfLines(lines, 2, 2, rows.length);
    expect(page.totalLines).toBe(5);
    expect(page.rows.map((r) => r.teamName)).toEqual(['web']);
    expect(page.subtotals).toEqual([expect.objectContaining({ afterRow: -1, group: 'api', rows: 2 })]);
  });

  it('should sort names with numbers in numeric order', () => {
    const named = [row('team 10', '2026-11-01', 1n), row('team 9', '2026-11-01', 1n)];
    const lines = reportLines(named, ['team'], { column: 'team', direction: 'asc' });
    expect(lines.map((l) => (l.kind === 'row' ? l.row.teamName : ''))).toEqual(['team 9', 'team 10']);
  });

  it('should keep the seven biggest series of a day chart and sum the rest as Other, on every day of the range', () => {
    const many = Array.from({ length: 10 }, (_, i) => row(`t${i}`, '2026-11-02', BigInt(100 - i)));
    const chart = perDaySeries(many, ['team', 'day'], daysOf('2026-11-01', '2026-11-02'));
    expect(chart.series).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6', 'Other']);
    expect(chart.days.map((d) => d.day)).toEqual(['2026-11-01', '2026-11-02']);
    expect(chart.days[1].costMicros.at(-1)).toBe(93n + 92n + 91n);
    expect(chart.days[0].costMicros.every((c) => c === 0n)).toBe(true);
  });

  it('should refuse a sort on a column the report does not have, naming the sort field', () => {
    expect(parseReportSort('costMicros:desc', ['key'])).toEqual({ column: 'costMicros', direction: 'desc' });
    expect(() => parseReportSort('team:asc', ['key'])).toThrow(expect.objectContaining({ field: 'sort' }));
    expect(() => parseReportSort('calls:up', [])).toThrow(expect.objectContaining({ field: 'sort' }));
  });
});
