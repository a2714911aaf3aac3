import { Provider } from '@nestjs/common';
import { BudgetService } from '@tollgate/budget';
import { BUDGET_COUNTERS, BudgetCounters } from '@tollgate/reporting';

/** Binds reporting's budget-counter port to the budget lib (the annotation type-checks the fit). */
export const BUDGET_COUNTERS_PROVIDER: Provider = {
  provide: BUDGET_COUNTERS,
  inject: [BudgetService],
  useFactory: (budgets: BudgetService): BudgetCounters => budgets,
};
