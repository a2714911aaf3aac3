import type { AuditedBy } from '@tollgate/audit';
import type { PutBudgetResult } from '@tollgate/budget';
import { AdminPrincipal, auditBy } from '@tollgate/identity';
import { toBudgetView } from './budget.view';

/** The audit of a budget put (an org's or a key's): `budget.created` or `budget.updated`, with the budget as shown. */
export function budgetPutAudit(admin: AdminPrincipal, orgId: string): AuditedBy<PutBudgetResult> {
  return {
    by: auditBy(admin),
    entry: ({ budget, created }) => ({
      orgId,
      action: created ? 'budget.created' : 'budget.updated',
      targetType: 'budget',
      targetId: budget.id,
      details: { ...toBudgetView(budget) },
    }),
  };
}
