import { useEffect, useState } from 'react';

/** The console lives under /console/; pages are paths below it (/console/explorer). */
export const BASE = '/console';

export type PageId =
  | 'overview'
  | 'explorer'
  | 'calls'
  | 'trail'
  | 'keys'
  | 'budgets'
  | 'upstreams'
  | 'prices'
  | 'policies'
  | 'audit'
  | 'alerts'
  | 'connections'
  | 'people'
  | 'settings';

export const PAGE_PATHS: Record<PageId, string> = {
  overview: `${BASE}/`,
  explorer: `${BASE}/explorer`,
  calls: `${BASE}/calls`,
  trail: `${BASE}/trail`,
  keys: `${BASE}/keys`,
  budgets: `${BASE}/budgets`,
  upstreams: `${BASE}/upstreams`,
  prices: `${BASE}/prices`,
  policies: `${BASE}/policies`,
  audit: `${BASE}/audit`,
  alerts: `${BASE}/alerts`,
  connections: `${BASE}/connections`,
  people: `${BASE}/people`,
  settings: `${BASE}/settings`,
};

export function pageOf(pathname: string): PageId | null {
  const p = pathname.replace(/\/+$/, '') || '/';
  if (p === BASE || p === `${BASE}/overview`) return 'overview';
  if (p === `${BASE}/explorer`) return 'explorer';
  if (p === PAGE_PATHS.calls) return 'calls';
  if (p === PAGE_PATHS.trail) return 'trail';
  if (p === `${BASE}/keys`) return 'keys';
  for (const id of ['budgets', 'upstreams', 'prices'] as const) if (p === PAGE_PATHS[id]) return id;
  for (const id of ['policies', 'audit', 'alerts', 'connections'] as const) if (p === PAGE_PATHS[id]) return id;
  for (const id of ['people', 'settings'] as const) if (p === PAGE_PATHS[id]) return id;
  return null;
}

/** Goes to `path` (which may carry a query string); the same path again keeps the query shown. */
export function navigate(path: string): void {
  const target = new URL(path, window.location.origin);
  if (window.location.pathname === target.pathname && !target.search) return;
  if (window.location.pathname + window.location.search === target.pathname + target.search) return;
  window.history.pushState(null, '', target.pathname + target.search);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

const SEARCH_CHANGED = 'tollgate:search';

/**
 * Replaces the page's query string (no new history entry: a view changed, not a page opened), so
 * the URL always holds what the page shows and can be shared or bookmarked.
 */
export function replaceSearch(search: string): void {
  const next = search ? `?${search.replace(/^\?/, '')}` : '';
  if (window.location.search === next) return;
  window.history.replaceState(null, '', window.location.pathname + next);
  window.dispatchEvent(new Event(SEARCH_CHANGED));
}

/** The page's query string, following replaceSearch and back/forward. */
export function useSearch(): string {
  const [search, setSearch] = useState(window.location.search);
  useEffect(() => {
    const onChange = () => setSearch(window.location.search);
    window.addEventListener('popstate', onChange);
    window.addEventListener(SEARCH_CHANGED, onChange);
    return () => {
      window.removeEventListener('popstate', onChange);
      window.removeEventListener(SEARCH_CHANGED, onChange);
    };
  }, []);
  return search;
}

export function usePathname(): string {
  const [path, setPath] = useState(window.location.pathname);
  useEffect(() => {
    const onPop = () => setPath(window.location.pathname);
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  return path;
}
