import { HttpStatus } from '@nestjs/common';
import { DomainException, UnavailableDependency, unmappedCode } from '@tollgate/kernel';

export enum BudgetExceptionCode {
  CounterUnavailable = 'BUDGET_COUNTER_UNAVAILABLE',
}

export class BudgetException extends DomainException<BudgetExceptionCode> {
  constructor(code: BudgetExceptionCode, message: string) {
    super(code, message);
    this.name = 'BudgetException';
  }

  get httpStatus(): number {
    return budgetHttpStatus(this.code);
  }

  /** Its counters live in Redis: a 503 says so, and when to retry. */
  override get dependency(): UnavailableDependency | undefined {
    return this.httpStatus === HttpStatus.SERVICE_UNAVAILABLE ? 'redis' : undefined;
  }
}

/** The HTTP status each code is answered with. */
function budgetHttpStatus(code: BudgetExceptionCode): number {
  switch (code) {
    case BudgetExceptionCode.CounterUnavailable:
      return HttpStatus.SERVICE_UNAVAILABLE;
    default:
      return unmappedCode(code);
  }
}
