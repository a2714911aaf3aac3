import type { Prisma } from '@tollgate/db';

/** The columns a page of keys can be ordered by (the console's Keys table sorts on the server by these). */
export const KEY_SORT_COLUMNS = [
  'name',
  'kind',
  'prefix',
  'team',
  'owner',
  'lastUsedAt',
  'expiresAt',
  'createdAt',
] as const;

export type KeySortColumn = (typeof KEY_SORT_COLUMNS)[number];

export interface KeySort {
  column: KeySortColumn;
  direction: 'asc' | 'desc';
}

/** `lastUsedAt:desc` -> { column, direction }; the query DTO has checked the form already. */
export function parseKeySort(value: string): KeySort {
  const [column, direction] = value.split(':');
  const known = KEY_SORT_COLUMNS.find((c) => c === column);
  if (!known || (direction !== 'asc' && direction !== 'desc')) throw new RangeError(`unknown key sort ${value}`);
  return { column: known, direction };
}

/**
 * The ORDER BY of a key sort, before the list's own tie-breakers (oldest first, then id): a stable order, so
 * offset pages neither repeat nor skip a key. Empty times (never used, never expires) go last both ways.
 */
export function keyOrderBy(sort: KeySort | undefined): Prisma.VirtualKeyOrderByWithRelationInput[] {
  if (!sort) return [];
  const d = sort.direction;
  switch (sort.column) {
    case 'name':
    case 'kind':
    case 'prefix':
    case 'createdAt':
      return [{ [sort.column]: d }];
    case 'team':
      return [{ team: { name: d } }];
    case 'owner':
      // Shown as the person's name, else their email.
      return [{ user: { name: { sort: d, nulls: 'last' } } }, { user: { email: d } }];
    case 'lastUsedAt':
    case 'expiresAt':
      return [{ [sort.column]: { sort: d, nulls: 'last' } }];
  }
}
