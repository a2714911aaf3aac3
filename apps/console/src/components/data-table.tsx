import { Group, Pagination, Select, Table, Text, type TableProps } from '@mantine/core';
import { type ReactNode, useMemo, useState } from 'react';
import { formatCount, formatMoneyFixed, microsToDecimal } from '../lib/money';
import {
  type CellValue,
  type ColumnSpec,
  type SortState,
  type TableLine,
  linesWithSubtotals,
  nextSort,
  pageOf,
  sortRows,
} from '../lib/table-model';
import { useSession } from '../session';
import { SortableTh } from './sortable-th';

/**
 * A table with one header row, its body rows as children and, given minWidth, a sideways scroll below that
 * width in a region a keyboard can focus (a read-only table has nothing else to focus: axe
 * scrollable-region-focusable). The other props (test id, striped…) go to the table itself. For figures,
 * use FigureTable below.
 */
export function DataTable({
  head,
  minWidth,
  label,
  children,
  ...tableProps
}: TableProps & { head: ReactNode; minWidth?: number; label?: string; children: ReactNode }) {
  const table = (
    <Table {...tableProps}>
      <Table.Thead>
        <Table.Tr>{head}</Table.Tr>
      </Table.Thead>
      <Table.Tbody>{children}</Table.Tbody>
    </Table>
  );
  return minWidth === undefined ? (
    table
  ) : (
    <SidewaysScroll label={label ?? 'Table'} minWidth={minWidth}>
      {table}
    </SidewaysScroll>
  );
}

/** Sideways only, and focusable, so a keyboard can scroll it; never a vertical box inside the page. */
function SidewaysScroll({ label, minWidth, children }: { label: string; minWidth?: number; children: ReactNode }) {
  return (
    <div
      className="tg-table-scroll"
      role="region"
      aria-label={`${label} (scrolls sideways on narrow screens)`}
      tabIndex={0}
    >
      <div style={minWidth ? { minWidth } : undefined}>{children}</div>
    </div>
  );
}

/** Money in tables: one precision for every figure of a column (the exact amount on hover and in the CSV). */
export const TABLE_MONEY_DIGITS = 4;

export interface FigureColumn<R> extends ColumnSpec<R> {
  /** What the cell shows; by default text as is, counts with separators, money at the table's precision. */
  render?: (row: R) => ReactNode;
  /** Allow breaking long names (tool names, emails) instead of widening the table. */
  wrap?: boolean;
}

const PAGE_SIZES = ['25', '50', '100', '500'];

/** An amount at a fixed precision, the exact one in its title (hover) and data-micros (tests, copy). */
export function FixedMoney({ micros, testId }: { micros: bigint | number | string; testId?: string }) {
  const { currency } = useSession();
  return (
    <span
      data-testid={testId}
      data-micros={String(micros)}
      title={`${microsToDecimal(micros)} ${currency} exactly`}
      style={{ fontVariantNumeric: 'tabular-nums', whiteSpace: 'nowrap' }}
    >
      {formatMoneyFixed(micros, currency, TABLE_MONEY_DIGITS)}
    </span>
  );
}

function Figure<R>({ column, value }: { column: FigureColumn<R>; value: CellValue }) {
  if (value === null || value === '') return <>—</>;
  if (column.kind === 'money') return <FixedMoney micros={value as bigint | number | string} />;
  if (column.kind === 'count') return <>{formatCount(value as bigint | number | string)}</>;
  return <>{String(value)}</>;
}

/**
 * A finance table: columns sort on a click (figures as exact integers), every row is reachable by pages
 * (no cap), figures read alike (money at one precision, counts with separators), optional subtotals per
 * group, and the total line stays under the table on every page. It scrolls sideways on narrow screens in
 * a region a keyboard can reach; it never scrolls up and down inside the page. The rows are all here;
 * for a table the API sorts and pages, use FigureTableView.
 */
export function FigureTable<R>({
  columns,
  rows,
  groups,
  defaultSort = null,
  pageSize: initialPageSize = 50,
  ...shown
}: {
  columns: FigureColumn<R>[];
  rows: readonly R[];
  /** Subtotals per value of one column (a text column), each group's rows together. */
  groups?: { column: string; of: (row: R) => string };
  defaultSort?: SortState | null;
  pageSize?: number;
} & FigureTableShown<R>) {
  const [sort, setSort] = useState<SortState | null>(defaultSort);
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(initialPageSize);
  const lines = useMemo<TableLine<R>[]>(() => {
    const sorted = sortRows(rows, columns, sort);
    return groups
      ? linesWithSubtotals(sorted, columns, groups.of, groups.column, sort)
      : sorted.map((row) => ({ kind: 'row', row }));
    // columns are rebuilt on each render by the pages; their ids and kinds are what sorting reads.
  }, [rows, sort, groups?.column, columns.map((c) => c.id).join()]);
  const current = pageOf(lines, page, pageSize);
  return (
    <FigureTableView
      {...shown}
      columns={columns}
      lines={current.lines}
      sort={sort}
      onSort={(column) => {
        setPage(1);
        setSort((s) => nextSort(s, column, columns.find((c) => c.id === column)?.kind ?? 'text'));
      }}
      pager={{
        page: current.page,
        pages: current.pages,
        pageSize,
        totalLines: lines.length,
        onPage: setPage,
        onPageSize: (size) => {
          setPageSize(size);
          setPage(1);
        },
      }}
    />
  );
}

/** What a finance table shows besides its lines. */
interface FigureTableShown<R> {
  rowKey: (row: R, index: number) => string;
  /** The table's accessible name (and its scroll region's). */
  label: string;
  testId?: string;
  rowTestId?: string;
  /** The total line: a value per figure column (what the API totalled; a tag breakdown's rows overlap). */
  total?: Record<string, CellValue>;
  minWidth?: number;
}

/** Which page of lines a table shows, of how many; the owner fetches or cuts the page. */
export interface TablePager {
  page: number;
  pages: number;
  pageSize: number;
  totalLines: number;
  onPage: (page: number) => void;
  onPageSize: (size: number) => void;
}

/** A finance table showing one page of lines as given: the owner sorts and pages (FigureTable, or the API). */
export function FigureTableView<R>({
  columns,
  lines,
  rowKey,
  label,
  testId,
  rowTestId,
  total,
  sort,
  onSort,
  pager,
  minWidth,
}: {
  columns: FigureColumn<R>[];
  /** The page's lines, in order. */
  lines: readonly TableLine<R>[];
  sort: SortState | null;
  onSort: (column: string) => void;
  pager: TablePager;
} & FigureTableShown<R>) {
  const firstFigure = columns.findIndex((c) => c.kind !== 'text');
  const textColumns = firstFigure === -1 ? columns.length : firstFigure;
  const { page, pages, pageSize, totalLines } = pager;

  const align = (c: FigureColumn<R>) => (c.kind === 'text' ? undefined : ('right' as const));
  const table = (
    <Table striped data-testid={testId} aria-label={label}>
      <Table.Thead>
        <Table.Tr>
          {columns.map((c) => (
            <SortableTh
              key={c.id}
              column={c.id}
              header={c.header}
              kind={c.kind}
              sorting={{ sort, toggle: onSort }}
              align={align(c)}
              testIdPrefix={testId}
            />
          ))}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {lines.map((line, i) =>
          line.kind === 'row' ? (
            <Table.Tr key={rowKey(line.row, i)} data-testid={rowTestId}>
              {columns.map((c) => (
                <Table.Td key={c.id} ta={align(c)} style={c.wrap ? { wordBreak: 'break-word' } : undefined}>
                  {c.render ? c.render(line.row) : <Figure column={c} value={c.value(line.row)} />}
                </Table.Td>
              ))}
            </Table.Tr>
          ) : (
            <Table.Tr key={`subtotal:${line.group}`} data-testid={testId ? `${testId}-subtotal` : undefined}>
              <Table.Th scope="row" colSpan={Math.max(1, textColumns)} fw={600}>
                Subtotal {line.group} ({formatCount(line.rows)} {line.rows === 1 ? 'row' : 'rows'})
              </Table.Th>
              {columns.slice(Math.max(1, textColumns)).map((c) => (
                <Table.Td key={c.id} ta={align(c)} fw={600}>
                  {c.kind === 'text' ? null : <Figure column={c} value={line.sums[c.id]} />}
                </Table.Td>
              ))}
            </Table.Tr>
          ),
        )}
      </Table.Tbody>
      {total && (
        <Table.Tfoot>
          <Table.Tr data-testid={testId ? `${testId}-total` : undefined}>
            <Table.Th scope="row" colSpan={Math.max(1, textColumns)}>
              Total
            </Table.Th>
            {columns.slice(Math.max(1, textColumns)).map((c) => (
              <Table.Th key={c.id} ta={align(c)}>
                {c.kind === 'text' ? null : <Figure column={c} value={total[c.id] ?? null} />}
              </Table.Th>
            ))}
          </Table.Tr>
        </Table.Tfoot>
      )}
    </Table>
  );
  return (
    <>
      <SidewaysScroll label={label} minWidth={minWidth}>
        {table}
      </SidewaysScroll>
      {totalLines > PAGE_SIZE_FLOOR && (
        <Group justify="space-between" mt="sm" gap="sm">
          <Text size="sm" c="dimmed" data-testid={testId ? `${testId}-range` : undefined}>
            {pages === 1
              ? `${formatCount(totalLines)} lines`
              : `Lines ${formatCount((page - 1) * pageSize + 1)}–${formatCount(
                  Math.min(page * pageSize, totalLines),
                )} of ${formatCount(totalLines)}`}
          </Text>
          <Group gap="sm">
            <Select
              aria-label="Lines per page"
              data={PAGE_SIZES}
              value={String(pageSize)}
              onChange={(v) => pager.onPageSize(Number(v ?? pageSize))}
              allowDeselect={false}
              w={90}
              size="xs"
            />
            {pages > 1 && (
              <Pagination
                total={pages}
                value={page}
                onChange={pager.onPage}
                size="sm"
                siblings={1}
                boundaries={1}
                getControlProps={(control) => ({ 'aria-label': `${control} page` })}
                getItemProps={(p) => ({ 'aria-label': `Page ${p}` })}
                data-testid={testId ? `${testId}-pages` : undefined}
              />
            )}
          </Group>
        </Group>
      )}
    </>
  );
}

/** Below this many lines a table needs no page controls. */
const PAGE_SIZE_FLOOR = 25;
