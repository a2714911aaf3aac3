/** Admin API answers read by the policies, audit log, alerts and my-connections pages (from admin-api.gen.ts). */
import type { components } from './admin-api.gen';

type Schemas = components['schemas'];

/** GET …/policies/:scope/:scopeId: a level's patterns, with the version to send as If-Match. */
export type Policy = Schemas['PolicyView'];

export type PolicyScope = Policy['scope'];

/** PATCH …/policies/:scope/:scopeId: `{add, remove}` per pattern list. */
export type PolicyPatch = Schemas['PatchPolicyDto'];

/** The pattern lists of a policy level the editor shows (checked against the OpenAPI's PATCH body). */
export const POLICY_LISTS = [
  'allow',
  'deny',
  'resourceAllow',
  'resourceDeny',
  'promptAllow',
  'promptDeny',
] as const satisfies readonly (keyof PolicyPatch & keyof Policy)[];
export type PolicyList = (typeof POLICY_LISTS)[number];

export const POLICY_LIST_LABELS: Record<PolicyList, string> = {
  allow: 'Allowed tools',
  deny: 'Denied tools',
  resourceAllow: 'Allowed resources',
  resourceDeny: 'Denied resources',
  promptAllow: 'Allowed prompts',
  promptDeny: 'Denied prompts',
};

export type PolicyDryRun = Schemas['PolicyDryRunView'];

/** GET …/keys/:keyId/effective-policy, as far as the simulator shows it. */
export type EffectivePolicy = Schemas['EffectivePolicyView'];

export type AuditEvent = Schemas['AuditEventView'];

export type AlertWebhook = Schemas['AlertWebhookView'];

export type BudgetAlert = Schemas['BudgetAlertView'];

export type Connection = Schemas['ConnectionView'];
