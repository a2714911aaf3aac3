import type { AuditedBy } from '@tollgate/audit';
import type { RateLimit } from '@tollgate/db';
import { AdminPrincipal, auditBy } from '@tollgate/identity';
import { toRateLimitView } from './rate-limit.view';

/** The audit of a rate limit added (to any level, a key's included), with the rule as shown. */
export function rateLimitCreatedAudit(admin: AdminPrincipal, orgId: string): AuditedBy<RateLimit> {
  return {
    by: auditBy(admin),
    entry: (rule) => ({
      orgId,
      action: 'rate-limit.created',
      targetType: 'rate-limit',
      targetId: rule.id,
      details: { ...toRateLimitView(rule) },
    }),
  };
}
