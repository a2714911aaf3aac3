import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatCount, formatMoneyFixed, roundedDecimal, toMicros } from './money';
import { type ColumnSpec, linesWithSubtotals, pageOf, sortRows, sumColumns } from './table-model';

interface Row {
  team: string;
  user: string | null;
  calls: number;
  cost: string;
}
const COLUMNS: ColumnSpec<Row>[] = [
  { id: 'team', header: 'Team', kind: 'text', value: (r) => r.team },
  { id: 'user', header: 'User', kind: 'text', value: (r) => r.user },
  { id: 'calls', header: 'Calls', kind: 'count', value: (r) => r.calls },
  { id: 'cost', header: 'Cost', kind: 'money', value: (r) => r.cost },
];
const ROWS: Row[] = [
  { team: 'web', user: 'bob', calls: 2, cost: '900' },
  { team: 'data', user: 'ada', calls: 10, cost: '100' },
  { team: 'web', user: null, calls: 1, cost: '9007199254740993' }, // above 2^53: a float would lose it
  { team: 'data', user: 'cy', calls: 3, cost: '-5' },
];

describe('finance table model', () => {
  it('should sort money as integers (not as text or floats) and keep empty cells last both ways', () => {
    const byCost = sortRows(ROWS, COLUMNS, { column: 'cost', direction: 'desc' }).map((r) => r.cost);
    expect(byCost).toEqual(['9007199254740993', '900', '100', '-5']);
    expect(sortRows(ROWS, COLUMNS, { column: 'user', direction: 'asc' }).map((r) => r.user)).toEqual([
      'ada',
      'bob',
      'cy',
      null,
    ]);
    expect(sortRows(ROWS, COLUMNS, { column: 'user', direction: 'desc' }).map((r) => r.user)).toEqual([
      'cy',
      'bob',
      'ada',
      null,
    ]);
    expect(sortRows(ROWS, COLUMNS, null)).toEqual(ROWS);
  });

  it('should follow each group by its exact subtotal, groups ordered by that subtotal when sorting on a figure', () => {
    const sort = { column: 'cost', direction: 'desc' } as const;
    const lines = linesWithSubtotals(sortRows(ROWS, COLUMNS, sort), COLUMNS, (r) => r.team, 'team', sort);
    const subtotals = lines.filter((l) => l.kind === 'subtotal');
    expect(subtotals.map((s) => [s.group, s.sums.cost, s.sums.calls])).toEqual([
      ['web', 9007199254741893n, 3n],
      ['data', 95n, 13n],
    ]);
    expect(lines.map((l) => (l.kind === 'row' ? l.row.user : `= ${l.group}`))).toEqual([
      null,
      'bob',
      '= web',
      'ada',
      'cy',
      '= data',
    ]);
  });

  it('should make subtotals add up to the total for any rows and any sort', () => {
    const row = fc.record({
      team: fc.constantFrom('a', 'b', 'c'),
      user: fc.option(fc.constantFrom('x', 'y'), { nil: null }),
      calls: fc.nat(1_000_000),
      cost: fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }).map(String),
    });
    fc.assert(
      fc.property(
        fc.array(row, { maxLength: 40 }),
        fc.constantFrom(...COLUMNS.map((c) => c.id)),
        fc.boolean(),
        (rows, column, asc) => {
          const sort = { column, direction: asc ? 'asc' : 'desc' } as const;
          const lines = linesWithSubtotals(sortRows(rows, COLUMNS, sort), COLUMNS, (r) => r.team, 'team', sort);
          const sub = lines.flatMap((l) => (l.kind === 'subtotal' ? [l.sums.cost] : [])).reduce((a, b) => a + b, 0n);
          expect(sub).toBe(sumColumns(rows, COLUMNS).cost);
          expect(lines.filter((l) => l.kind === 'row')).toHaveLength(rows.length);
        },
      ),
    );
  });

  it('should page through every line without a cap, clamping a page past the end', () => {
    const lines = Array.from({ length: 1001 }, (_, i) => i);
    expect(pageOf(lines, 1, 500).pages).toBe(3);
    expect(pageOf(lines, 3, 500).lines).toEqual([1000]);
    expect(pageOf(lines, 9, 500).page).toBe(3);
    expect(pageOf([], 1, 50)).toEqual({ lines: [], page: 1, pages: 1 });
  });

  it('should round money half away from zero at a fixed precision, exactly', () => {
    expect(roundedDecimal(153058n, 4)).toBe('0.1531');
    expect(roundedDecimal(300000n, 4)).toBe('0.3000');
    expect(roundedDecimal(50n, 4)).toBe('0.0001');
    expect(roundedDecimal(-49n, 4)).toBe('0.0000');
    expect(roundedDecimal(-150n, 4)).toBe('-0.0002');
    expect(roundedDecimal('9007199254740993', 2)).toBe('9007199254.74');
    expect(formatMoneyFixed(281300n, 'USD', 4, 'en-US')).toBe('$0.2813');
    expect(formatMoneyFixed(1_200_000_000n, 'EUR', 4, 'en-US')).toBe('€1,200.0000');
    expect(formatCount(1234567)).toMatch(/^1.234.567$/);
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }), (m) => {
        const back = toMicros(roundedDecimal(m, 4).replace('.', '') + '00');
        const diff = back > m ? back - m : m - back;
        expect(diff <= 50n).toBe(true);
      }),
    );
  });
});
