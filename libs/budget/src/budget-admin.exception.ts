export enum BudgetAdminExceptionCode {
  InvalidBudget = 'BUDGET_INVALID',
  ScopeNotFound = 'BUDGET_SCOPE_NOT_FOUND',
  BudgetNotFound = 'BUDGET_NOT_FOUND',
}

export class BudgetAdminException extends Error {
  constructor(
    readonly code: BudgetAdminExceptionCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'BudgetAdminException';
  }
}
