import { useState } from 'react';
import { Loaded, useLoad } from './use-load';

export interface CursorPages<P> {
  page: Loaded<P> & { reload: () => void };
  /** 1 for the first page. */
  number: number;
  hasPrevious: boolean;
  hasNext: boolean;
  previous: () => void;
  next: () => void;
}

/**
 * A list the API answers a page at a time with a keyset cursor (`nextCursor`, null on the last
 * page): the cursors of the pages opened so far, the first page's being none. They belong to one
 * `query` (the filters, as a string): another query starts at its first page in the same render, so
 * no page of the new query is asked with an old query's cursor.
 */
export function useCursorPages<P extends { nextCursor: string | null }>(
  query: string,
  load: (cursor: string | undefined) => Promise<P>,
  deps: unknown[],
): CursorPages<P> {
  const [opened, setOpened] = useState<{ query: string; cursors: (string | null)[] }>({ query, cursors: [null] });
  const cursors = opened.query === query ? opened.cursors : [null];
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => load(cursor ?? undefined), [...deps, query, cursor]);
  const nextCursor = page.state === 'ready' ? page.data.nextCursor : null;
  return {
    page,
    number: cursors.length,
    hasPrevious: cursors.length > 1,
    hasNext: nextCursor !== null,
    previous: () => setOpened({ query, cursors: cursors.slice(0, -1) }),
    next: () => {
      if (nextCursor !== null) setOpened({ query, cursors: [...cursors, nextCursor] });
    },
  };
}
