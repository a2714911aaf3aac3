import { BudgetModule } from '@tollgate/budget';
import { ReportingModule } from '@tollgate/reporting';
import { BUDGET_COUNTERS_PROVIDER } from './budget-counters.provider';

/**
 * The reporting lib as the admin API configures it (budget counters read from Redis). One value that
 * every feature imports: a dynamic module registered twice would be two instances.
 */
export const ReportingLib = ReportingModule.register({
  imports: [BudgetModule],
  budgetCounters: BUDGET_COUNTERS_PROVIDER,
});
