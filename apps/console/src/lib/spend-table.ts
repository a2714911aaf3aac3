import { rowLabel } from '@tollgate/reporting/row-label';
import type { ReportDimension, ReportRow, SpendReport } from '../api/admin-types';
import { microsToDecimal, sumMicros, toMicros } from './money';
import type { ShownTable } from './table-csv';

export const DIMENSION_LABELS: Record<ReportDimension, string> = {
  team: 'Team',
  user: 'User',
  key: 'Key',
  upstream: 'Upstream',
  tool: 'Tool',
  day: 'Day',
  tag: 'Key tag',
};

/** The CSV's columns for one dimension: the name as shown, then the ids a spreadsheet can join on. */
const CSV_DIMENSION_COLUMNS: Record<ReportDimension, readonly [header: string, column: string][]> = {
  team: [
    ['Team', 'teamName'],
    ['Team id', 'teamId'],
  ],
  user: [
    ['User', 'userEmail'],
    ['User id', 'userId'],
  ],
  key: [
    ['Key', 'keyName'],
    ['Key prefix', 'keyPrefix'],
    ['Key id', 'keyId'],
  ],
  upstream: [
    ['Upstream', 'upstreamNamespace'],
    ['Upstream id', 'upstreamId'],
  ],
  tool: [
    ['Upstream', 'upstreamNamespace'],
    ['Upstream id', 'upstreamId'],
    ['Tool', 'toolName'],
  ],
  day: [['Day', 'day']],
  tag: [['Key tag', 'tag']],
};

/** What the CSV says of a row beyond the report: the team a key or a team admin's scope belongs to. */
export interface SpendCsvContext {
  currency: string;
  /** The team of a row when the report is not grouped by team (a key's team, a team admin's team); null: unknown. */
  teamOf: (row: ReportRow) => { id: string; name: string } | null;
}

const cell = (v: string | number | null | undefined) => (v === null || v === undefined ? '' : String(v));

/**
 * The explorer's CSV: every row the report has (not one page of it), names and their ids, the team, then
 * the figures with the cost as an exact decimal, and on every line the period, time zone and currency, so a
 * line pasted elsewhere still says what it counts. The last line is the report's total.
 */
export function spendCsv(report: SpendReport, dims: ReportDimension[], ctx: SpendCsvContext): ShownTable {
  const dimColumns = dims.flatMap((d) => CSV_DIMENSION_COLUMNS[d]);
  // A tool row also names its upstream: do not repeat the upstream's columns when both are asked for.
  const seen = new Set<string>();
  const columns = dimColumns.filter(([h]) => (seen.has(h) ? false : (seen.add(h), true)));
  const withTeam = !dims.includes('team');
  const context = [report.from, report.to, report.timeZone, ctx.currency];
  return {
    headers: [
      ...columns.map(([h]) => h),
      ...(withTeam ? ['Team', 'Team id'] : []),
      'Calls',
      'Errors',
      'Output tokens',
      `Cost (${ctx.currency})`,
      'From',
      'To',
      'Time zone',
      'Currency',
    ],
    rows: report.rows.map((r) => {
      const team = withTeam ? ctx.teamOf(r) : null;
      return [
        ...columns.map(([, c]) => cell(r[c])),
        ...(withTeam ? [team?.name ?? '', team?.id ?? ''] : []),
        String(r.calls),
        String(r.errors),
        String(r.outputTokens),
        microsToDecimal(r.costMicros as number | string),
        ...context,
      ];
    }),
    footer: [
      ...columns.map((_, i) => (i === 0 ? 'Total' : '')),
      ...(withTeam ? ['', ''] : []),
      String(report.totals.calls),
      String(report.totals.errors),
      String(report.totals.outputTokens),
      microsToDecimal(report.totals.costMicros),
      ...context,
    ],
  };
}

/** Rows' cost summed in BigInt; the page checks it equals the report's total before showing it. */
export function rowsCost(report: SpendReport): bigint {
  return sumMicros(report.rows.map((r) => r.costMicros as number | string));
}

export interface Ranked {
  label: string;
  costMicros: bigint;
  calls: number;
}

/** Rows ranked by cost, highest first. */
export function topBy(report: SpendReport, dim: ReportDimension, n: number): Ranked[] {
  return report.rows
    .map((r) => ({
      label: rowLabel(r, dim),
      costMicros: toMicros(r.costMicros as number | string),
      calls: Number(r.calls),
    }))
    .sort((a, b) => (b.costMicros > a.costMicros ? 1 : b.costMicros < a.costMicros ? -1 : b.calls - a.calls))
    .slice(0, n);
}
