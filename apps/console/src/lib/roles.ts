import type { AdminRole } from '../api/admin-types';
import type { PageId } from './router';

/** Spend reports are for org admins and finance (the API's Audit level). */
export function canReadSpend(role: AdminRole): boolean {
  return role === 'PLATFORM_ADMIN' || role === 'ORG_ADMIN' || role === 'FINANCE';
}

/** Issue and revoke keys: everyone but finance (members their own, team admins their team's). */
export function canManageKeys(role: AdminRole): boolean {
  return role !== 'FINANCE';
}

/** Org configuration (policies, alert webhooks): org and platform admins only. */
export function canManageOrg(role: AdminRole): boolean {
  return role === 'PLATFORM_ADMIN' || role === 'ORG_ADMIN';
}

/** Budgets, upstreams and tools, prices: org configuration every role but members reads here. */
export function governancePages(role: AdminRole): PageId[] {
  return role === 'MEMBER' ? [] : ['budgets', 'upstreams', 'prices'];
}

export function pagesFor(role: AdminRole): PageId[] {
  const pages: PageId[] = canReadSpend(role) ? ['overview', 'explorer', 'keys'] : ['keys'];
  // Policies are org configuration every role reads; audit and alerts are the Audit level;
  // finance may not see anyone's upstream connections, so it has none of its own here.
  pages.push('policies');
  if (canReadSpend(role)) pages.push('audit', 'alerts');
  if (role !== 'FINANCE') pages.push('connections');
  pages.push(...governancePages(role));
  return pages;
}

export const ROLE_LABELS: Record<AdminRole, string> = {
  PLATFORM_ADMIN: 'Platform admin',
  ORG_ADMIN: 'Org admin',
  TEAM_ADMIN: 'Team admin',
  FINANCE: 'Finance',
  MEMBER: 'Member',
};
