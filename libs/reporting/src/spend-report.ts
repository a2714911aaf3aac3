import { ReportingException, ReportingExceptionCode } from './reporting.exception';

/** What a spend report can be broken down by. */
/** `tag`: one row per key tag (a call of a key with two tags counts in both rows; keys without tags in a null row). */
export const REPORT_DIMENSIONS = ['team', 'user', 'key', 'upstream', 'tool', 'day', 'tag'] as const;
export type ReportDimension = (typeof REPORT_DIMENSIONS)[number];

/** The figures of every row and of the totals: integers (money in micro-units). */
export const REPORT_METRICS = ['calls', 'errors', 'outputTokens', 'costMicros'] as const;
export type ReportMetric = (typeof REPORT_METRICS)[number];

export type SpendFigures = Record<ReportMetric, bigint>;

/** One row: the dimension columns asked for (ids and names) and the figures. */
export type SpendRow = Record<string, string | null> & { figures: SpendFigures };

export interface SpendReport {
  orgId: string;
  from: string;
  to: string;
  /** The IANA zone whose calendar days `from`, `to` and `day` are. */
  timeZone: string;
  /** Only calls of keys carrying this tag, when set. */
  tag: string | null;
  groupBy: ReportDimension[];
  /** Column names of each row, dimension columns first, in order (the CSV header). */
  columns: string[];
  rows: SpendRow[];
  totals: SpendFigures;
}

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
