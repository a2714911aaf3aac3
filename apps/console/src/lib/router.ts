import { useEffect, useState } from 'react';

/** The console lives under /console/; pages are paths below it (/console/explorer). */
export const BASE = '/console';

export type PageId =
  | 'overview'
  | 'explorer'
  | 'keys'
  | 'budgets'
  | 'upstreams'
  | 'prices'
  | 'policies'
  | 'audit'
  | 'alerts'
  | 'connections';

export const PAGE_PATHS: Record<PageId, string> = {
  overview: `${BASE}/`,
  explorer: `${BASE}/explorer`,
  keys: `${BASE}/keys`,
  budgets: `${BASE}/budgets`,
  upstreams: `${BASE}/upstreams`,
  prices: `${BASE}/prices`,
  policies: `${BASE}/policies`,
  audit: `${BASE}/audit`,
  alerts: `${BASE}/alerts`,
  connections: `${BASE}/connections`,
};

export function pageOf(pathname: string): PageId | null {
  const p = pathname.replace(/\/+$/, '') || '/';
  if (p === BASE || p === `${BASE}/overview`) return 'overview';
  if (p === `${BASE}/explorer`) return 'explorer';
  if (p === `${BASE}/keys`) return 'keys';
  for (const id of ['budgets', 'upstreams', 'prices'] as const) if (p === PAGE_PATHS[id]) return id;
  for (const id of ['policies', 'audit', 'alerts', 'connections'] as const) if (p === PAGE_PATHS[id]) return id;
  return null;
}

export function navigate(path: string): void {
  if (window.location.pathname === path) return;
  window.history.pushState(null, '', path);
  window.dispatchEvent(new PopStateEvent('popstate'));
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
