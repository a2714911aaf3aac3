/** Admin API answers read by the policies, audit log, alerts and my-connections pages. */

export type PolicyScope = 'ORG' | 'TEAM' | 'USER' | 'KEY';

/** The pattern lists of a policy level, as PATCH `{add, remove}` knows them. */
export const POLICY_LISTS = ['allow', 'deny', 'resourceAllow', 'resourceDeny', 'promptAllow', 'promptDeny'] as const;
export type PolicyList = (typeof POLICY_LISTS)[number];

export const POLICY_LIST_LABELS: Record<PolicyList, string> = {
  allow: 'Allowed tools',
  deny: 'Denied tools',
  resourceAllow: 'Allowed resources',
  resourceDeny: 'Denied resources',
  promptAllow: 'Allowed prompts',
  promptDeny: 'Denied prompts',
};

export interface Policy extends Record<PolicyList, string[]> {
  id: string;
  scope: PolicyScope;
  scopeId: string;
  version: number;
  autoExecute: string[];
  updatedAt: string;
}

export type PolicyPatch = Partial<Record<PolicyList, { add?: string[]; remove?: string[] }>>;

export interface PolicyDryRun {
  scope: string;
  scopeId: string;
  allow: string[];
  deny: string[];
  keysEvaluated: number;
  changes: { keyId: string; keyName: string; teamId: string; userId: string; gained: string[]; lost: string[] }[];
}

export interface ToolRefusal {
  reason: 'DENIED_BY_RULE' | 'NOT_IN_ALLOW_LIST' | 'NO_ALLOW_LIST' | 'KEY_REVOKED' | 'KEY_EXPIRED';
  scope: PolicyScope | null;
  scopeId: string | null;
  rule: string | null;
  message: string;
}

/** GET …/keys/:keyId/effective-policy, as far as the simulator shows it. */
export interface EffectivePolicy {
  keyStatus: 'ACTIVE' | 'REVOKED' | 'EXPIRED';
  evaluatedAt: string;
  disclosure: { mode: string; requestedMode: string };
  allowedTools: number;
  refusedTools: number;
  tools: {
    exposedName: string;
    callable: boolean;
    price: {
      ruleId: string | null;
      toolPattern: string;
      perCallMicros: number | string;
      perOutputTokenMicros: number | string;
    } | null;
    refusal: ToolRefusal | null;
  }[];
}

export interface AuditEvent {
  id: string;
  actorId: string;
  actor: {
    tokenId: string;
    tokenName: string;
    tokenPrefix: string | null;
    role: string;
    user: { id: string; name: string | null; email: string } | null;
    ownerLabel: string | null;
  } | null;
  action: string;
  targetType: string;
  targetId: string | null;
  details: unknown;
  createdAt: string;
}

export interface AlertWebhook {
  id: string;
  url: string;
  description: string | null;
  createdAt: string;
}

export interface BudgetAlert {
  id: string;
  budgetId: string;
  periodStart: string;
  threshold: number;
  spentMicros: number | string;
  deliveredAt: string | null;
  attempts: number;
  lastError: string | null;
  createdAt: string;
}

/** A budget as the alert history names it. */
export interface AlertedBudget {
  id: string;
  scope: PolicyScope;
  scopeId: string;
  period: string;
  mode: 'HARD' | 'SOFT';
}

export interface OAuthUpstream {
  id: string;
  namespace: string;
  authMode: 'NONE' | 'STATIC_SECRET' | 'PER_USER_OAUTH';
  enabled: boolean;
}

export interface Connection {
  id: string;
  upstreamId: string;
  health: 'valid' | 'expiring' | 'expired' | 'refresh_failed';
  scope: string | null;
  expiresAt: string | null;
  canRefresh: boolean;
  lastRefreshError: string | null;
  createdAt: string;
}
