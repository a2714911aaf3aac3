import { HttpStatus } from '@nestjs/common';
import { DomainException } from '@tollgate/kernel';

export enum BudgetAdminExceptionCode {
  InvalidBudget = 'BUDGET_INVALID',
  ScopeNotFound = 'BUDGET_SCOPE_NOT_FOUND',
  BudgetNotFound = 'BUDGET_NOT_FOUND',
}

/** The HTTP status each code is answered with (a Record over the codes: a new code does not compile without one). */
const HTTP_STATUS: Record<BudgetAdminExceptionCode, number> = {
  [BudgetAdminExceptionCode.InvalidBudget]: HttpStatus.BAD_REQUEST,
  [BudgetAdminExceptionCode.ScopeNotFound]: HttpStatus.NOT_FOUND,
  [BudgetAdminExceptionCode.BudgetNotFound]: HttpStatus.NOT_FOUND,
};

export class BudgetAdminException extends DomainException<BudgetAdminExceptionCode> {
  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }
}
