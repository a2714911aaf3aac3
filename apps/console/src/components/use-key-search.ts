import { useEffect, useState } from 'react';
import { adminApi, answer } from '../api/admin-client';
import type { Key } from '../api/admin-types';
import { useSession } from '../session';

/** How many matching keys a search shows; typing more narrows it. */
const KEY_PICKER_LIMIT = 20;
/** Typing pauses this long before the API is asked. */
const SEARCH_DEBOUNCE_MS = 300;

export const keyLabel = (k: Pick<Key, 'name' | 'prefix'>) => `${k.name} (${k.prefix})`;

/**
 * The keys matching what is typed, asked of the API once typing pauses (`GET …/keys/page?search=…&limit=20`,
 * scoped to the caller's reach; it matches name, prefix, tag, OAuth client, team and owner) instead of
 * loading every key of the org. Nothing is asked until the list is opened (`open`) or typed in; a search
 * equal to `notASearch` (the chosen key's own label, shown in the box) is not one.
 */
export function useKeySearch({ inactive, notASearch }: { inactive: boolean; notASearch?: string }) {
  const { org } = useSession();
  const [search, setSearch] = useState('');
  const [asked, setAsked] = useState<string | null>(null);
  const [found, setFound] = useState<Key[]>([]);

  const typed = search.trim();
  useEffect(() => {
    if (asked === null && typed === '') return;
    if (notASearch !== undefined && search === notASearch) return;
    const t = setTimeout(() => setAsked(typed), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [typed]);
  useEffect(() => {
    if (asked === null) return;
    let current = true;
    answer(
      adminApi.GET('/v1/orgs/{orgId}/keys/page', {
        params: {
          path: { orgId: org.id },
          query: { ...(asked ? { search: asked } : {}), limit: KEY_PICKER_LIMIT, inactive },
        },
      }),
    ).then(
      (page) => current && setFound(page.keys),
      () => current && setFound([]),
    );
    return () => {
      current = false;
    };
  }, [org.id, asked, inactive]);

  return {
    search,
    setSearch,
    found,
    /** Whether the API was asked yet (until then the list says nothing, not "no key matches"). */
    asked: asked !== null,
    open: () => setAsked((a) => a ?? ''),
  };
}
