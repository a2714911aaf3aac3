import type { AdminRole } from '../api/admin-types';
import type { PageId } from './router';

/** The whole org's spend, alerts and audit trail: org admins and finance (the API's Audit level). */
export function canReadSpend(role: AdminRole): boolean {
  return role === 'PLATFORM_ADMIN' || role === 'ORG_ADMIN' || role === 'FINANCE';
}

/**
 * Whose spend the report API answers for a role: the org, the team admin's team (teamId forced),
 * or the member's own calls (userId forced). Every role reads its own share.
 */
export type SpendScope = 'org' | 'team' | 'user';
export function spendScopeOf(role: AdminRole): SpendScope {
  return canReadSpend(role) ? 'org' : role === 'TEAM_ADMIN' ? 'team' : 'user';
}

/** Issue and revoke keys: everyone but finance (members their own, team admins their team's). */
export function canManageKeys(role: AdminRole): boolean {
  return role !== 'FINANCE';
}

/** Org configuration (policies, alert webhooks): org and platform admins only. */
export function canManageOrg(role: AdminRole): boolean {
  return role === 'PLATFORM_ADMIN' || role === 'ORG_ADMIN';
}

/**
 * Budgets (scoped by the API: a member sees their own and their keys'), then upstreams and tools
 * and prices: org configuration every role but members reads here.
 */
export function governancePages(role: AdminRole): PageId[] {
  return role === 'MEMBER' ? ['budgets'] : ['budgets', 'upstreams', 'prices'];
}

export function pagesFor(role: AdminRole): PageId[] {
  // Everyone has the overview, the explorer, the call log and the agent trail, scoped by the API to
  // what the role may see.
  const pages: PageId[] = ['overview', 'explorer', 'calls', 'trail', 'keys'];
  // Policies are org configuration every role reads; audit and alerts are the Audit level;
  // finance may not see anyone's upstream connections, so it has none of its own here.
  pages.push('policies');
  if (canReadSpend(role)) pages.push('audit', 'alerts');
  if (role !== 'FINANCE') pages.push('connections');
  pages.push(...governancePages(role));
  // Running the organisation: org admins change it, finance reads who is who and the settings.
  if (canReadSpend(role)) pages.push('people', 'settings');
  return pages;
}

export const ROLE_LABELS: Record<AdminRole, string> = {
  PLATFORM_ADMIN: 'Platform admin',
  ORG_ADMIN: 'Org admin',
  TEAM_ADMIN: 'Team admin',
  FINANCE: 'Finance',
  MEMBER: 'Member',
};
