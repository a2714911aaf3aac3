import type { SpendQuery } from '../api/spend-report';
import { REPORT_DIMENSIONS, ReportDimension } from '../api/admin-types';

/**
 * The report API's filters (GET …/reports/spend): id lists for team, user, key and upstream,
 * tool names, and one key tag; filters AND, a list's values OR. The explorer's URL uses the same
 * parameter names, so a shared link and the API call it makes read alike.
 */
export const FILTER_PARAMS = ['teamId', 'userId', 'keyId', 'upstreamId', 'tool', 'tag'] as const;
export type FilterParam = (typeof FILTER_PARAMS)[number];
export type ReportFilters = Record<FilterParam, string[]>;

/** What the explorer shows: range, breakdown and filters; the page's query string holds it all. */
export interface ExplorerView {
  from: string;
  to: string;
  groupBy: ReportDimension[];
  filters: ReportFilters;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ID_PARAMS: ReadonlySet<FilterParam> = new Set(['teamId', 'userId', 'keyId', 'upstreamId']);

export const NO_FILTERS: ReportFilters = { teamId: [], userId: [], keyId: [], upstreamId: [], tool: [], tag: [] };

export function activeFilters(filters: ReportFilters): FilterParam[] {
  return FILTER_PARAMS.filter((p) => filters[p].length > 0);
}

const list = (raw: string | null) =>
  raw === null
    ? []
    : [
        ...new Set(
          raw
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        ),
      ];

/**
 * A view from a query string; what is missing takes `defaults`. An id that is not a UUID is
 * dropped (the API would refuse it), an unknown dimension too; days are kept as written so the
 * page can say what is wrong with them.
 */
export function viewFromSearch(search: string, defaults: ExplorerView): ExplorerView {
  const q = new URLSearchParams(search);
  const filters = { ...NO_FILTERS };
  for (const p of FILTER_PARAMS) {
    const values = list(q.get(p));
    // The API takes one key tag; the other filters take lists.
    filters[p] = ID_PARAMS.has(p) ? values.filter((v) => UUID.test(v)) : p === 'tag' ? values.slice(0, 1) : values;
  }
  const groupBy = q.has('groupBy')
    ? REPORT_DIMENSIONS.filter((d) => list(q.get('groupBy')).includes(d))
    : defaults.groupBy;
  return { from: q.get('from') ?? defaults.from, to: q.get('to') ?? defaults.to, groupBy, filters };
}

/** The query string of a view: only what differs from `defaults`, so the plain URL is the default view. */
export function searchOfView(view: ExplorerView, defaults: ExplorerView): string {
  const q = new URLSearchParams();
  if (view.from !== defaults.from) q.set('from', view.from);
  if (view.to !== defaults.to) q.set('to', view.to);
  if (view.groupBy.join(',') !== defaults.groupBy.join(',')) q.set('groupBy', view.groupBy.join(','));
  for (const p of FILTER_PARAMS) if (view.filters[p].length) q.set(p, view.filters[p].join(','));
  return readable(q);
}

/** The report API's query for a view (every parameter spelled out; CSV asks the same with format=csv). */
export function reportQuery(view: ExplorerView): SpendQuery {
  const q: SpendQuery = { from: view.from, to: view.to };
  if (view.groupBy.length) q.groupBy = REPORT_DIMENSIONS.filter((d) => view.groupBy.includes(d)).join(',');
  for (const p of FILTER_PARAMS) if (view.filters[p].length) q[p] = view.filters[p].join(',');
  return q;
}

// Commas and colons are legal in a query; left unescaped, a shared link stays readable.
const readable = (q: URLSearchParams) => q.toString().replace(/%2C/gi, ',').replace(/%3A/gi, ':');
