import type { ReportDimension, ReportRow, SpendReport } from '../api/admin-types';
import { sumMicros, toMicros } from './money';

/** Dimensions the explorer filters on, and the row column each is matched by. */
export const FILTER_COLUMNS = {
  team: 'teamId',
  user: 'userId',
  key: 'keyId',
  upstream: 'upstreamId',
  tool: 'toolName',
} as const;
export type FilterDimension = keyof typeof FILTER_COLUMNS;
export type ReportFilters = Partial<Record<FilterDimension, string>>;

const ID_COLUMNS: Record<ReportDimension, readonly string[]> = {
  team: ['teamId'],
  user: ['userId'],
  key: ['keyId'],
  upstream: ['upstreamId'],
  tool: ['upstreamId', 'toolName'],
  day: ['day'],
  tag: ['tag'],
};

export function activeFilters(filters: ReportFilters): FilterDimension[] {
  return (Object.keys(FILTER_COLUMNS) as FilterDimension[]).filter((d) => filters[d]);
}

const matches = (row: ReportRow, filters: ReportFilters) =>
  activeFilters(filters).every((d) => String(row[FILTER_COLUMNS[d]] ?? '') === filters[d]);

/**
 * The report API groups by dimensions but filters only by tag: the explorer asks for the filter
 * dimensions as extra groups, keeps the matching rows and folds them back onto the dimensions
 * shown, summing in BigInt. `totals` is the sum of the kept rows of `totalsSource` (a report not
 * grouped by tag, since a call of a key with two tags is in two tag rows).
 */
export function filterReport(
  report: SpendReport,
  shownDims: ReportDimension[],
  filters: ReportFilters,
  totalsSource: SpendReport = report,
): SpendReport {
  if (activeFilters(filters).length === 0) return report;
  const keyCols = shownDims.flatMap((d) => ID_COLUMNS[d]);
  const keep = new Set(report.columns.filter((c) => shownDims.some((d) => dimensionColumns(d).includes(c))));
  const groups = new Map<string, { row: ReportRow; micros: bigint }>();
  for (const r of report.rows) {
    if (!matches(r, filters)) continue;
    const k = JSON.stringify(keyCols.map((c) => r[c] ?? null));
    let g = groups.get(k);
    if (!g) {
      const dims: ReportRow = {};
      for (const c of keep) dims[c] = r[c] ?? null;
      g = { row: { ...dims, calls: 0, errors: 0, outputTokens: 0 }, micros: 0n };
      groups.set(k, g);
    }
    g.row.calls = Number(g.row.calls) + Number(r.calls);
    g.row.errors = Number(g.row.errors) + Number(r.errors);
    g.row.outputTokens = Number(g.row.outputTokens) + Number(r.outputTokens);
    g.micros += toMicros(r.costMicros as number | string);
  }
  const rows = [...groups.values()].map((g) => ({ ...g.row, costMicros: String(g.micros) }));
  const kept = totalsSource.rows.filter((r) => matches(r, filters));
  const totals = {
    calls: kept.reduce((n, r) => n + Number(r.calls), 0),
    errors: kept.reduce((n, r) => n + Number(r.errors), 0),
    outputTokens: kept.reduce((n, r) => n + Number(r.outputTokens), 0),
    costMicros: String(sumMicros(kept.map((r) => r.costMicros as number | string))),
  };
  return {
    ...report,
    groupBy: shownDims,
    columns: report.columns.filter((c) => keep.has(c)).concat(['calls', 'errors', 'outputTokens', 'costMicros']),
    rows,
    totals,
  };
}

function dimensionColumns(d: ReportDimension): readonly string[] {
  return {
    team: ['teamId', 'teamName'],
    user: ['userId', 'userEmail'],
    key: ['keyId', 'keyName', 'keyPrefix'],
    upstream: ['upstreamId', 'upstreamNamespace'],
    tool: ['upstreamId', 'upstreamNamespace', 'toolName'],
    day: ['day'],
    tag: ['tag'],
  }[d];
}
