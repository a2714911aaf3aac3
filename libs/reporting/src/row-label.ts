/*
 * What a spend report's row is called: the API sorts, subtotals and charts by it, and the console
 * shows it. Browser-safe: the console's Vite bundle imports this file alone
 * (`@tollgate/reporting/row-label`), so it imports nothing (row-label.spec.ts checks).
 */

/** What a spend report can be broken down by. */
/** `tag`: one row per key tag (a call of a key with two tags counts in both rows; keys without tags in a null row). */
export const REPORT_DIMENSIONS = ['team', 'user', 'key', 'upstream', 'tool', 'day', 'tag'] as const;
export type ReportDimension = (typeof REPORT_DIMENSIONS)[number];

/** A report row's names and ids: the API's strings, or the JSON values the console reads. */
export type LabelledRow = { readonly [column: string]: unknown };

const text = (v: unknown) => (v === null || v === undefined || v === '' ? '(none)' : String(v));

/** What a row is called along one breakdown: names first, ids when a name is missing. */
export function rowLabel(row: LabelledRow, dim: ReportDimension): string {
  switch (dim) {
    case 'team':
      return text(row.teamName ?? row.teamId);
    case 'user':
      return text(row.userEmail ?? row.userId);
    case 'key':
      return row.keyName ? `${String(row.keyName)} (${String(row.keyPrefix ?? '?')})` : text(row.keyId);
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
