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

/** Budgets, upstreams and tools, prices: org configuration every role but members reads here. */
export function governancePages(role: AdminRole): PageId[] {
  return role === 'MEMBER' ? [] : ['budgets', 'upstreams', 'prices'];
}

export function pagesFor(role: AdminRole): PageId[] {
  return [...(canReadSpend(role) ? (['overview', 'explorer', 'keys'] as PageId[]) : (['keys'] as PageId[])), ...governancePages(role)];
}

export const ROLE_LABELS: Record<AdminRole, string> = {
  PLATFORM_ADMIN: 'Platform admin',
  ORG_ADMIN: 'Org admin',
  TEAM_ADMIN: 'Team admin',
  FINANCE: 'Finance',
  MEMBER: 'Member',
};
