import { HttpStatus } from '@nestjs/common';
import { DomainException, UnavailableDependency } from '@tollgate/kernel';

export enum BudgetExceptionCode {
  CounterUnavailable = 'BUDGET_COUNTER_UNAVAILABLE',
}

/** The HTTP status each code is answered with (a Record over the codes: a new code does not compile without one). */
const HTTP_STATUS: Record<BudgetExceptionCode, number> = {
  [BudgetExceptionCode.CounterUnavailable]: HttpStatus.SERVICE_UNAVAILABLE,
};

export class BudgetException extends DomainException<BudgetExceptionCode> {
  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }

  /** Its counters live in Redis: a 503 says so, and when to retry. */
  override get dependency(): UnavailableDependency | undefined {
    return this.httpStatus === HttpStatus.SERVICE_UNAVAILABLE ? 'redis' : undefined;
  }
}
