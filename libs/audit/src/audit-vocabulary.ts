/**
 * The kinds of thing the trail names, one spelling each. The trail once held `org` beside
 * `organization` (migration 20261228040000 merged them); `targetTypeFilter` still reads `org`.
 */
export const AUDIT_TARGET_TYPES = [
  'admin-token',
  'alert-webhook',
  'budget',
  'budget-record',
  'catalog-entry',
  'connection',
  'oauth-client',
  'organization',
  'policy',
  'price-rule',
  'rate-limit',
  'redis',
  'team',
  'tool',
  'upstream',
  'usage-rollup',
  'user',
  'virtual-key',
] as const;

export type AuditTargetType = (typeof AUDIT_TARGET_TYPES)[number];

/** Spellings the trail held before one was chosen, and the one each became. */
const FORMER_TARGET_TYPES: Readonly<Record<string, AuditTargetType>> = { org: 'organization' };

/** The spelling a search by target type reads: a former one finds the rows it was migrated to. */
export function targetTypeFilter(asked: string): string {
  return FORMER_TARGET_TYPES[asked] ?? asked;
}

/** Every action the trail records, `<thing>.<verb>`. */
export const AUDIT_ACTIONS = [
  'admin-token.created',
  'admin-token.revoked',
  'admin-token.updated',
  'alert-webhook.created',
  'alert-webhook.deleted',
  'budget.counter-rebuilt',
  'budget.counter-repaired',
  'budget.created',
  'budget.deleted',
  'budget.reconcile-requested',
  'budget.record-repaired',
  'budget.updated',
  'catalog-entry.approved',
  'catalog-entry.rejected',
  'connection.connected',
  'connection.revoked',
  'connection.started',
  'identity-provider.removed',
  'identity-provider.set',
  'key.created',
  'key.oauth-authorized',
  'key.revoked',
  'key.rotated',
  'key.updated',
  'oauth.client-metadata-refused',
  'org.created',
  'org.deleted',
  'org.disabled',
  'org.email-domain-claimed',
  'org.email-domain-released',
  'org.enabled',
  'org.updated',
  'policy.patched',
  'policy.updated',
  'price-rule.created',
  'price-rule.ended',
  'rate-limit.created',
  'rate-limit.deleted',
  'redis.epoch-set',
  'rollup.requested',
  'session.signed-in',
  'team.created',
  'team.member-added',
  'team.member-removed',
  'team.member-updated',
  'team.updated',
  'tool.approved',
  'tool.rejected',
  'tools.tier-scores-requested',
  'upstream.created',
  'upstream.deleted',
  'upstream.disabled',
  'upstream.enabled',
  'upstream.exposure-changed',
  'upstream.sync-paused',
  'upstream.sync-requested',
  'upstream.sync-resumed',
  'upstream.updated',
  'user.created',
  'user.created-on-sign-in',
  'user.moved',
  'user.offboarded',
  'user.org-role-set',
  'user.sign-in-code-issued',
  'user.updated',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];
