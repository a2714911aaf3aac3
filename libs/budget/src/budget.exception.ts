export enum BudgetExceptionCode {
  CounterUnavailable = 'BUDGET_COUNTER_UNAVAILABLE',
}

export class BudgetException extends Error {
  constructor(
    readonly code: BudgetExceptionCode,
    message: string,
  ) {
    super(message);
    this.name = 'BudgetException';
  }
}
