import type { ReviewDecision } from '@tollgate/catalog';
import type { AuditEntry } from '@tollgate/audit';

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
