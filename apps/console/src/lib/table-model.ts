/**
 * What a finance table does with its rows, without React: sorting on a column, subtotals per group and
 * pagination. Sums are BigInt (money is micro-units, counts are integers), so a subtotal is exact.
 */

export type CellValue = string | number | bigint | null;

export interface ColumnSpec<R> {
  id: string;
  header: string;
  /** text: compared as text; count: an integer shown with separators; money: integer micro-units. */
  kind: 'text' | 'count' | 'money';
  value: (row: R) => CellValue;
}

export interface SortState {
  column: string;
  direction: 'asc' | 'desc';
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

const isEmpty = (v: CellValue) => v === null || v === '';

/** Text by the locale (numbers inside text in numeric order), figures as integers (BigInt: exact). */
function compareCells(a: CellValue, b: CellValue, asText: boolean): number {
  if (isEmpty(a)) return isEmpty(b) ? 0 : 1;
  if (isEmpty(b)) return -1;
  if (asText) return collator.compare(String(a), String(b));
  const x = BigInt(a!);
  const y = BigInt(b!);
  return x < y ? -1 : x > y ? 1 : 0;
}

function isFigure<R>(c: ColumnSpec<R>): boolean {
  return c.kind !== 'text';
}

/** A click on a column's header: a new column sorts text A→Z and figures largest first; the same one flips. */
export function nextSort(current: SortState | null, column: string, kind: ColumnSpec<unknown>['kind']): SortState {
  if (current?.column !== column) return { column, direction: kind === 'text' ? 'asc' : 'desc' };
  return { column, direction: current.direction === 'desc' ? 'asc' : 'desc' };
}

/** Rows ordered by one column (stable: ties keep the API's order); null: the API's order. */
export function sortRows<R>(rows: readonly R[], columns: readonly ColumnSpec<R>[], sort: SortState | null): R[] {
  const column = sort && columns.find((c) => c.id === sort.column);
  if (!column) return [...rows];
  const sign = sort.direction === 'asc' ? 1 : -1;
  return rows
    .map((row, i) => ({ row, i, v: column.value(row) }))
    .sort((a, b) => {
      if (isEmpty(a.v) !== isEmpty(b.v)) return isEmpty(a.v) ? 1 : -1; // empty cells last in both directions
      return sign * compareCells(a.v, b.v, column.kind === 'text') || a.i - b.i;
    })
    .map((x) => x.row);
}

/** The sums of the figure columns over some rows (text columns are left out). */
export function sumColumns<R>(rows: readonly R[], columns: readonly ColumnSpec<R>[]): Record<string, bigint> {
  const sums: Record<string, bigint> = {};
  for (const c of columns.filter(isFigure)) {
    let s = 0n;
    for (const r of rows) {
      const v = c.value(r);
      if (!isEmpty(v)) s += BigInt(v!);
    }
    sums[c.id] = s;
  }
  return sums;
}

export type TableLine<R> =
  { kind: 'row'; row: R } | { kind: 'subtotal'; group: string; rows: number; sums: Record<string, bigint> };

/**
 * Rows in their groups, each group followed by its subtotal line. Groups are ordered as the sort asks:
 * by their subtotal on a figure column, by name on the group's column, else by where their first row is.
 */
export function linesWithSubtotals<R>(
  sorted: readonly R[],
  columns: readonly ColumnSpec<R>[],
  groupOf: (row: R) => string,
  groupColumn: string,
  sort: SortState | null,
): TableLine<R>[] {
  const groups = new Map<string, R[]>();
  for (const r of sorted) {
    const g = groupOf(r);
    const list = groups.get(g);
    if (list) list.push(r);
    else groups.set(g, [r]);
  }
  let entries = [...groups.entries()].map(([group, rows]) => ({ group, rows, sums: sumColumns(rows, columns) }));
  const column = sort && columns.find((c) => c.id === sort.column);
  if (sort && column) {
    const sign = sort.direction === 'asc' ? 1 : -1;
    if (isFigure(column)) {
      entries = entries
        .map((e, i) => ({ e, i }))
        .sort((a, b) => sign * compareCells(a.e.sums[column.id], b.e.sums[column.id], false) || a.i - b.i)
        .map((x) => x.e);
    } else if (column.id === groupColumn) {
      entries = entries.sort((a, b) => sign * compareCells(a.group, b.group, true));
    }
  }
  return entries.flatMap((e) => [
    ...e.rows.map((row) => ({ kind: 'row' as const, row })),
    { kind: 'subtotal' as const, group: e.group, rows: e.rows.length, sums: e.sums },
  ]);
}

/** One page of lines (1-based page, clamped to the pages there are). */
export function pageOf<T>(
  lines: readonly T[],
  page: number,
  size: number,
): { lines: T[]; page: number; pages: number } {
  const pages = Math.max(1, Math.ceil(lines.length / size));
  const p = Math.min(Math.max(1, page), pages);
  return { lines: lines.slice((p - 1) * size, p * size), page: p, pages };
}
