import type { ReviewDecision } from '@tollgate/upstream-registry';
import type { AuditedBy, AuditEntry } from '@tollgate/audit';
import { AdminPrincipal, auditBy } from '@tollgate/identity';

/** The audit entry of an approval or rejection, single or bulk: the hashes before and after, never the definition. */
export function toolDecisionAuditEntry(
  orgId: string,
  action: 'tool.approved' | 'tool.rejected',
  { tool, previousPinnedHash }: ReviewDecision,
  reason: string | undefined,
  bulk = false,
): AuditEntry {
  return {
    orgId,
    action,
    targetType: 'tool',
    targetId: tool.id,
    details: {
      upstreamId: tool.upstreamId,
      name: tool.name,
      definitionHash: tool.definitionHash,
      previousPinnedHash,
      pinnedHash: tool.pinnedHash,
      ...(bulk ? { bulk: true } : {}),
      ...(reason ? { reason } : {}),
    },
  };
}

/** The audit of a review decision, written by the catalog in the decision's transaction. */
export function toolDecisionAudit(
  admin: AdminPrincipal,
  orgId: string,
  action: 'tool.approved' | 'tool.rejected',
  reason: string | undefined,
  bulk = false,
): AuditedBy<ReviewDecision> {
  return { by: auditBy(admin), entry: (decision) => toolDecisionAuditEntry(orgId, action, decision, reason, bulk) };
}
