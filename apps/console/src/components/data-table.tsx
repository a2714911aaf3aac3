import { Table, type TableProps } from '@mantine/core';
import type { ReactNode } from 'react';

/**
 * A table with one header row, its body rows as children and, given minWidth, a horizontal scroll below that width.
 * The other props (test id, striped…) go to the table itself.
 */
export function DataTable({
  head,
  minWidth,
  children,
  ...tableProps
}: TableProps & { head: ReactNode; minWidth?: number; children: ReactNode }) {
  const table = (
    <Table {...tableProps}>
      <Table.Thead>
        <Table.Tr>{head}</Table.Tr>
      </Table.Thead>
      <Table.Tbody>{children}</Table.Tbody>
    </Table>
  );
  return minWidth === undefined ? table : <Table.ScrollContainer minWidth={minWidth}>{table}</Table.ScrollContainer>;
}
