import { ReportingException, ReportingExceptionCode } from './reporting.exception';
import {
  REPORT_DIMENSIONS,
  REPORT_METRICS,
  ReportDimension,
  ReportMetric,
  SpendFigures,
  SpendReport,
  SpendRow,
  addFigures,
  zeroFigures,
} from './spend-report';
import { rowLabel } from './row-label';

/**
 * One page of a spend report, as a table shows it: sorted on one column, with a subtotal line after
 * each value of the first breakdown (two breakdowns or more), cut into pages of lines. Reports of keys
 * by day run to tens of thousands of rows: the API sends a page (and the chart's few series), not them
 * all; the CSV asks for the whole report.
 */

/** Most lines one page holds. */
export const MAX_REPORT_PAGE = 500;

export type ReportSortColumn = ReportDimension | ReportMetric;
export const REPORT_SORT_COLUMNS: readonly ReportSortColumn[] = [...REPORT_DIMENSIONS, ...REPORT_METRICS];

export interface ReportSort {
  column: ReportSortColumn;
  direction: 'asc' | 'desc';
}

/** `costMicros:desc` -> the sort; absent: the report's own order. A bad one is a 400 naming `sort`. */
export function parseReportSort(value: string | undefined, groupBy: readonly ReportDimension[]): ReportSort | null {
  if (value === undefined || value === '') return null;
  const [column, direction = 'asc'] = value.split(':');
  const known = (REPORT_METRICS as readonly string[]).includes(column) || groupBy.includes(column as ReportDimension);
  if (!known || (direction !== 'asc' && direction !== 'desc'))
    throw new ReportingException(
      ReportingExceptionCode.InvalidQuery,
      `sort must be <column>:asc or <column>:desc, the column one of: ${[...groupBy, ...REPORT_METRICS].join(', ')} (got "${value}")`,
      'sort',
    );
  return { column: column as ReportSortColumn, direction };
}

// Names as people read them: numbers inside text in numeric order, case and accents aside.
const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

const compareFigures = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

/** Rows ordered by one column (stable: ties keep the report's order); text by its label, figures as integers. */
function sortRows(rows: readonly SpendRow[], sort: ReportSort | null): SpendRow[] {
  if (!sort) return [...rows];
  const sign = sort.direction === 'asc' ? 1 : -1;
  const isMetric = (REPORT_METRICS as readonly string[]).includes(sort.column);
  const keyed = rows.map((row, i) => ({
    row,
    i,
    v: isMetric ? row.figures[sort.column as ReportMetric] : rowLabel(row, sort.column as ReportDimension),
  }));
  keyed.sort(
    (a, b) =>
      sign *
        (isMetric ? compareFigures(a.v as bigint, b.v as bigint) : collator.compare(a.v as string, b.v as string)) ||
      a.i - b.i,
  );
  return keyed.map((k) => k.row);
}

export type ReportLine =
  { kind: 'row'; row: SpendRow } | { kind: 'subtotal'; group: string; rows: number; figures: SpendFigures };

/**
 * The table's lines: rows sorted, and with two breakdowns or more each value of the first followed by its
 * subtotal. Groups follow the sort: by their subtotal on a figure, by name on the first breakdown, else
 * where their first row is.
 */
export function reportLines(
  rows: readonly SpendRow[],
  groupBy: readonly ReportDimension[],
  sort: ReportSort | null,
): ReportLine[] {
  const sorted = sortRows(rows, sort);
  if (groupBy.length < 2) return sorted.map((row) => ({ kind: 'row', row }));
  const first = groupBy[0];
  const groups = new Map<string, { rows: SpendRow[]; figures: SpendFigures }>();
  for (const row of sorted) {
    const label = rowLabel(row, first);
    const g = groups.get(label) ?? { rows: [], figures: zeroFigures() };
    g.rows.push(row);
    g.figures = addFigures(g.figures, row.figures);
    groups.set(label, g);
  }
  let entries = [...groups.entries()];
  if (sort) {
    const sign = sort.direction === 'asc' ? 1 : -1;
    if ((REPORT_METRICS as readonly string[]).includes(sort.column)) {
      const m = sort.column as ReportMetric;
      entries = entries
        .map((e, i) => ({ e, i }))
        .sort((a, b) => sign * compareFigures(a.e[1].figures[m], b.e[1].figures[m]) || a.i - b.i)
        .map((x) => x.e);
    } else if (sort.column === first) {
      entries.sort((a, b) => sign * collator.compare(a[0], b[0]));
    }
  }
  return entries.flatMap(([group, g]) => [
    ...g.rows.map((row) => ({ kind: 'row' as const, row })),
    { kind: 'subtotal' as const, group, rows: g.rows.length, figures: g.figures },
  ]);
}

/** Spend per day stacked by one breakdown: the biggest series by cost, the rest summed as "Other". */
export interface PerDaySeries {
  stackBy: ReportDimension | null;
  /** Series labels, biggest first ("Other" last when there is one). */
  series: string[];
  /** Every day of the range with a cost per series (same order; micro-units). */
  days: { day: string; costMicros: bigint[] }[];
}

/** The chart's data from every row of a report broken down by day (the console draws at most `maxSeries`). */
export function perDaySeries(
  rows: readonly SpendRow[],
  groupBy: readonly ReportDimension[],
  days: readonly string[],
  maxSeries = 8,
): PerDaySeries {
  const stackBy = groupBy.find((d) => d !== 'day') ?? null;
  const labels = rows.map((r) => (stackBy ? rowLabel(r, stackBy) : 'Spend'));
  const totals = new Map<string, bigint>();
  labels.forEach((l, i) => totals.set(l, (totals.get(l) ?? 0n) + rows[i].figures.costMicros));
  const ranked = [...totals.entries()].sort((a, b) => compareFigures(b[1], a[1])).map(([l]) => l);
  const kept = new Set(ranked.slice(0, maxSeries - 1));
  const seriesOf = (l: string) => (ranked.length <= maxSeries || kept.has(l) ? l : 'Other');
  const series = [...new Set(ranked.map(seriesOf))];
  const index = new Map(series.map((s, i) => [s, i]));
  const byDay = new Map(days.map((d) => [d, series.map(() => 0n)]));
  rows.forEach((r, i) => {
    const day = r.day ?? '';
    const sums = byDay.get(day) ?? series.map(() => 0n);
    sums[index.get(seriesOf(labels[i]))!] += r.figures.costMicros;
    byDay.set(day, sums);
  });
  return { stackBy, series, days: [...byDay.entries()].map(([day, costMicros]) => ({ day, costMicros })) };
}

/** One page of lines: its rows, and the subtotal lines among them (each after the row it follows; -1: before the first). */
export interface ReportPage {
  offset: number;
  limit: number;
  totalLines: number;
  totalRows: number;
  rows: SpendRow[];
  subtotals: { afterRow: number; group: string; rows: number; figures: SpendFigures }[];
}

export function pageOfLines(
  lines: readonly ReportLine[],
  offset: number,
  limit: number,
  totalRows: number,
): ReportPage {
  const rows: SpendRow[] = [];
  const subtotals: ReportPage['subtotals'] = [];
  for (const line of lines.slice(offset, offset + limit)) {
    if (line.kind === 'row') rows.push(line.row);
    else subtotals.push({ afterRow: rows.length - 1, group: line.group, rows: line.rows, figures: line.figures });
  }
  return { offset, limit, totalLines: lines.length, totalRows, rows, subtotals };
}

/** Every calendar day from `from` to `to`, both included (`YYYY-MM-DD`). */
export function daysOf(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = new Date(`${from}T00:00:00Z`); d <= new Date(`${to}T00:00:00Z`); d.setUTCDate(d.getUTCDate() + 1))
    out.push(d.toISOString().slice(0, 10));
  return out;
}

export interface PagedSpendReport {
  page: ReportPage;
  /** Only when the report is broken down by day: what the chart draws, from every row. */
  perDay: PerDaySeries | null;
}

/** A report cut to one page of its table's lines, with the chart's series computed from all its rows. */
export function pageSpendReport(
  report: SpendReport,
  opts: { offset: number; limit: number; sort: ReportSort | null },
): PagedSpendReport {
  const lines = reportLines(report.rows, report.groupBy, opts.sort);
  return {
    page: pageOfLines(lines, opts.offset, opts.limit, report.rows.length),
    perDay: report.groupBy.includes('day')
      ? perDaySeries(report.rows, report.groupBy, daysOf(report.from, report.to))
      : null,
  };
}
