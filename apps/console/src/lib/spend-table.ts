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

const text = (v: string | number | null | undefined) =>
  v === null || v === undefined || v === '' ? '(none)' : String(v);

/** What a row is called along one dimension: names first, ids when a name is missing. */
export function dimensionLabel(row: ReportRow, dim: ReportDimension): string {
  switch (dim) {
    case 'team':
      return text(row.teamName ?? row.teamId);
    case 'user':
      return text(row.userEmail ?? row.userId);
    case 'key':
      return row.keyName ? `${row.keyName} (${row.keyPrefix ?? '?'})` : text(row.keyId);
    case 'upstream':
      return text(row.upstreamNamespace ?? row.upstreamId);
    case 'tool':
      return `${text(row.upstreamNamespace ?? row.upstreamId)} / ${text(row.toolName)}`;
    case 'day':
      return text(row.day);
    case 'tag':
      return row.tag === null || row.tag === undefined ? '(untagged)' : String(row.tag);
  }
}

/** The explorer's table: one column per dimension, then the figures; cost as an exact decimal. */
export function spendTable(report: SpendReport, dims: ReportDimension[], currency: string): ShownTable {
  return {
    headers: [...dims.map((d) => DIMENSION_LABELS[d]), 'Calls', 'Errors', 'Output tokens', `Cost (${currency})`],
    rows: report.rows.map((r) => [
      ...dims.map((d) => dimensionLabel(r, d)),
      String(r.calls),
      String(r.errors),
      String(r.outputTokens),
      microsToDecimal(r.costMicros as number | string),
    ]),
    footer: [
      ...dims.map((_, i) => (i === 0 ? 'Total' : '')),
      String(report.totals.calls),
      String(report.totals.errors),
      String(report.totals.outputTokens),
      microsToDecimal(report.totals.costMicros),
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
      label: dimensionLabel(r, dim),
      costMicros: toMicros(r.costMicros as number | string),
      calls: Number(r.calls),
    }))
    .sort((a, b) => (b.costMicros > a.costMicros ? 1 : b.costMicros < a.costMicros ? -1 : b.calls - a.calls))
    .slice(0, n);
}
