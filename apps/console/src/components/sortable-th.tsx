import { Table, UnstyledButton } from '@mantine/core';
import { useState } from 'react';
import { type ColumnSpec, type SortState, nextSort, sortRows } from '../lib/table-model';

/** A table's sort: which column and which way (null: the API's order), and how to apply it to rows. */
export interface TableSort {
  sort: SortState | null;
  /** A click on a column's header: a new column sorts text A→Z and figures largest first; the same one flips. */
  toggle: (column: string, kind: ColumnSpec<unknown>['kind']) => void;
}

/** The sort state of a table (the rows are sorted by sortRows, in the browser, or by the API). */
export function useTableSort(initial: SortState | null = null): TableSort {
  const [sort, setSort] = useState<SortState | null>(initial);
  return { sort, toggle: (column, kind) => setSort((s) => nextSort(s, column, kind)) };
}

/** Rows ordered by the table's sort, in the browser (text by the locale, figures as exact integers, empty last). */
export function sortedBy<R>(rows: readonly R[], columns: readonly ColumnSpec<R>[], sorting: TableSort): R[] {
  return sortRows(rows, columns, sorting.sort);
}

/**
 * A column header that sorts its table: a button (Tab, then Enter or Space, as any button), `aria-sort` on
 * the header while the table is sorted by it, an arrow for the eye. FigureTableView's headers are the same.
 */
export function SortableTh({
  column,
  header,
  kind = 'text',
  sorting,
  align,
  testIdPrefix,
  w,
}: {
  column: string;
  header: string;
  kind?: ColumnSpec<unknown>['kind'];
  sorting: TableSort;
  align?: 'right';
  testIdPrefix?: string;
  w?: number;
}) {
  const dir = sorting.sort?.column === column ? sorting.sort.direction : null;
  const next = dir ? (dir === 'desc' ? 'ascending' : 'descending') : kind === 'text' ? 'ascending' : 'descending';
  return (
    <Table.Th ta={align} w={w} aria-sort={dir === 'asc' ? 'ascending' : dir === 'desc' ? 'descending' : undefined}>
      <UnstyledButton
        onClick={() => sorting.toggle(column, kind)}
        fw={600}
        fz="sm"
        data-testid={testIdPrefix ? `${testIdPrefix}-sort-${column}` : undefined}
        aria-label={`${header}: sort ${next}`}
      >
        {header}
        <span aria-hidden="true">{dir === 'asc' ? ' ▲' : dir === 'desc' ? ' ▼' : ' ↕'}</span>
      </UnstyledButton>
    </Table.Th>
  );
}

/** A table's sortable header cells by column id: `const th = sortableHeads(columns, sorting, 'prices'); th('limit')`. */
export function sortableHeads<R>(columns: readonly ColumnSpec<R>[], sorting: TableSort, testIdPrefix: string) {
  return function th(id: string, opts: { w?: number; align?: 'right' } = {}) {
    const c = columns.find((x) => x.id === id);
    if (!c) throw new Error(`no column ${id}`);
    return (
      <SortableTh
        column={id}
        header={c.header}
        kind={c.kind}
        sorting={sorting}
        testIdPrefix={testIdPrefix}
        w={opts.w}
        align={opts.align}
      />
    );
  };
}
