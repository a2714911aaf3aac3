/** The four levels budgets, policies and rate limits are set at. */
export const TENANT_LEVELS = ['ORG', 'TEAM', 'USER', 'KEY'] as const;
export type TenantLevel = (typeof TENANT_LEVELS)[number];

/** The ids of a caller at each level. */
export interface CallerIds {
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
}

/** Whether a rule set at `scope`/`scopeId` applies to this caller (its org, team, user or key). */
export function appliesToCaller(rule: { scope: TenantLevel; scopeId: string }, ids: CallerIds): boolean {
  switch (rule.scope) {
    case 'ORG':
      return rule.scopeId === ids.orgId;
    case 'TEAM':
      return rule.scopeId === ids.teamId;
    case 'USER':
      return rule.scopeId === ids.userId;
    case 'KEY':
      return rule.scopeId === ids.keyId;
  }
}
