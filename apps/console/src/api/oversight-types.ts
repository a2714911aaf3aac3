/** Admin API answers read by the policies, audit log, alerts and my-connections pages. */
import type { components } from './admin-api.gen';

type Schemas = components['schemas'];

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

export type PolicyDryRun = Schemas['PolicyDryRunView'];

export type ToolRefusal = Schemas['ToolRefusalView'];

/** GET …/keys/:keyId/effective-policy, as far as the simulator shows it. */
export type EffectivePolicy = Schemas['EffectivePolicyView'];

export type AuditEvent = Schemas['AuditEventView'];

export type AlertWebhook = Schemas['AlertWebhookView'];

export type BudgetAlert = Schemas['BudgetAlertView'];

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

export type Connection = Schemas['ConnectionView'];
