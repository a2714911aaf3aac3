import type { AuditAction, AuditedBy, AuditTargetType } from '@tollgate/audit';
import { systemActor } from '@tollgate/audit';

/** How a test's own change through a lib is audited: an ordinary row, by `system:test`. */
export function auditedByTest<T>(action: AuditAction, targetType: AuditTargetType): AuditedBy<T> {
  return { by: systemActor('system:test'), entry: () => ({ orgId: null, action, targetType }) };
}
