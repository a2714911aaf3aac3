import { isUuid } from '@tollgate/kernel';
import { ReportingException, ReportingExceptionCode } from './reporting.exception';
import { REPORT_DIMENSIONS, ReportDimension } from './row-label';

// The breakdowns live beside the row label, which the console bundles too.
export { REPORT_DIMENSIONS, type ReportDimension };

/** The figures of every row and of the totals: integers (money in micro-units). */
export const REPORT_METRICS = ['calls', 'errors', 'outputTokens', 'costMicros'] as const;
export type ReportMetric = (typeof REPORT_METRICS)[number];

export type SpendFigures = Record<ReportMetric, bigint>;

/** One row: the dimension columns asked for (ids and names) and the figures. */
export type SpendRow = Record<string, string | null> & { figures: SpendFigures };

/**
 * What a report counts: calls matching every filter (AND), any value within one filter (OR).
 * An empty list does not filter. `tool` matches the ledger's tool name (with `upstreamId`, one
 * upstream's tool); `tag` keeps calls of keys carrying it (as the keys carry it now).
 */
export interface SpendFilters {
  teamId: string[];
  userId: string[];
  keyId: string[];
  upstreamId: string[];
  tool: string[];
  tag: string | null;
}

/** Whose calls the caller may see: the whole org, one team's calls, or one user's own. */
export type ReportScope = { kind: 'org'; id: null } | { kind: 'team'; id: string } | { kind: 'user'; id: string };

export const ORG_SCOPE: ReportScope = { kind: 'org', id: null };

/** The id-list filters (the other two are `tool` and `tag`). */
export const ID_FILTERS = ['teamId', 'userId', 'keyId', 'upstreamId'] as const;
export type IdFilter = (typeof ID_FILTERS)[number];

/** Most values one filter takes: a longer list is an export, or a mistake. */
export const MAX_FILTER_VALUES = 100;
const MAX_TOOL_NAME = 200;
// Postgres text cannot hold NUL, and no tool name holds a control character.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

export function noFilters(): SpendFilters {
  return { teamId: [], userId: [], keyId: [], upstreamId: [], tool: [], tag: null };
}

/**
 * `a,b` -> ['a', 'b'] for a filter (`field` names it in the 400): de-duplicated, in the order given;
 * ids must be UUIDs (lower-cased), tool names 1 to 200 characters without control characters.
 * Absent or empty: no filter.
 */
export function parseFilterList(value: string | undefined, field: IdFilter | 'tool'): string[] {
  if (value === undefined || value === '') return [];
  const what = field === 'tool' ? 'tool names' : 'UUIDs';
  const out: string[] = [];
  for (const raw of value.split(',')) {
    const item = field === 'tool' ? raw.trim() : raw.trim().toLowerCase();
    const valid =
      field === 'tool'
        ? item.length > 0 && item.length <= MAX_TOOL_NAME && !CONTROL_CHARACTER.test(item)
        : isUuid(item);
    if (!valid) {
      const shown = item.length > 40 ? `${item.slice(0, 40)}...` : item;
      throw new ReportingException(
        ReportingExceptionCode.InvalidQuery,
        `${field} must be a comma-separated list of ${what} (got "${shown}")`,
        field,
      );
    }
    if (!out.includes(item)) out.push(item);
  }
  if (out.length > MAX_FILTER_VALUES)
    throw new ReportingException(
      ReportingExceptionCode.InvalidQuery,
      `${field} takes at most ${MAX_FILTER_VALUES} values (got ${out.length})`,
      field,
    );
  return out;
}

/**
 * The filters a scope allows: a team's caller sees only its team's calls, a user's only their own,
 * so that filter is forced; asking for another team or user is refused (403 naming the field).
 */
export function scopeFilters(scope: ReportScope, filters: SpendFilters): SpendFilters {
  if (scope.kind === 'org') return filters;
  const field = scope.kind === 'team' ? 'teamId' : 'userId';
  const others = filters[field].filter((id) => id !== scope.id);
  if (others.length > 0)
    throw new ReportingException(
      ReportingExceptionCode.OutOfScope,
      `${field} ${others.join(', ')} is outside what this caller may read: its reports cover only ${scope.kind} ${scope.id}`,
      field,
    );
  return { ...filters, [field]: [scope.id] };
}

export interface SpendReport {
  orgId: string;
  from: string;
  to: string;
  /** The IANA zone whose calendar days `from`, `to` and `day` are. */
  timeZone: string;
  /** Only calls of keys carrying this tag, when set. */
  tag: string | null;
  /** Every filter applied, forced ones included. */
  filters: SpendFilters;
  scope: ReportScope;
  groupBy: ReportDimension[];
  /** Column names of each row, dimension columns first, in order (the CSV header). */
  columns: string[];
  rows: SpendRow[];
  totals: SpendFigures;
  /**
   * With a bound (`top`): the rows the report left out, the cheapest, and what they sum to; null when
   * it left none out. Rows plus remainder are every row of the report (grouped by tag, tag rows:
   * a call of a key with two tags is in two).
   */
  remainder?: SpendRemainder | null;
  /**
   * Set when the range reaches into months retention dropped from the ledger (LEDGER_RETENTION_MONTHS):
   * the end of the last dropped month (UTC, ISO 8601). Calls before it are not in the figures.
   */
  droppedBefore?: string;
}

/** The rows a bounded report left out: how many, and their figures summed. */
export interface SpendRemainder {
  rows: number;
  figures: SpendFigures;
}

/**
 * Most rows a JSON report holds unless asked for fewer (`top`): the costliest, the rest summed as its
 * remainder. A breakdown of users by tool over a month runs to tens of thousands of rows at a million
 * calls, megabytes no one reads; the table pages (`limit`) and the CSV export has every row.
 */
export const DEFAULT_REPORT_TOP = 1_000;

/** The columns each dimension adds to a row. */
export const DIMENSION_COLUMNS: Record<ReportDimension, readonly string[]> = {
  team: ['teamId', 'teamName'],
  user: ['userId', 'userEmail'],
  key: ['keyId', 'keyName', 'keyPrefix'],
  upstream: ['upstreamId', 'upstreamNamespace'],
  tool: ['upstreamId', 'upstreamNamespace', 'toolName'],
  day: ['day'],
  tag: ['tag'],
};

/** `team,day` -> ['team', 'day']: de-duplicated, in the order given; unknown names are a 400 naming `groupBy`. */
export function parseGroupBy(value: string | undefined): ReportDimension[] {
  if (value === undefined || value.trim() === '') return [];
  const out: ReportDimension[] = [];
  for (const raw of value.split(',')) {
    const name = raw.trim();
    if (!(REPORT_DIMENSIONS as readonly string[]).includes(name)) {
      throw new ReportingException(
        ReportingExceptionCode.InvalidQuery,
        `groupBy must be a comma-separated list of: ${REPORT_DIMENSIONS.join(', ')} (got "${name}")`,
        'groupBy',
      );
    }
    if (!out.includes(name as ReportDimension)) out.push(name as ReportDimension);
  }
  return out;
}

export function reportColumns(groupBy: readonly ReportDimension[]): string[] {
  const cols: string[] = [];
  for (const d of groupBy) for (const c of DIMENSION_COLUMNS[d]) if (!cols.includes(c)) cols.push(c);
  return [...cols, ...REPORT_METRICS];
}

export function zeroFigures(): SpendFigures {
  return { calls: 0n, errors: 0n, outputTokens: 0n, costMicros: 0n };
}

export function addFigures(a: SpendFigures, b: SpendFigures): SpendFigures {
  return {
    calls: a.calls + b.calls,
    errors: a.errors + b.errors,
    outputTokens: a.outputTokens + b.outputTokens,
    costMicros: a.costMicros + b.costMicros,
  };
}
