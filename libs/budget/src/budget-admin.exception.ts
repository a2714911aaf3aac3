import { HttpStatus } from '@nestjs/common';
import { DomainException, unmappedCode } from '@tollgate/kernel';

export enum BudgetAdminExceptionCode {
  InvalidBudget = 'BUDGET_INVALID',
  ScopeNotFound = 'BUDGET_SCOPE_NOT_FOUND',
  BudgetNotFound = 'BUDGET_NOT_FOUND',
}

export class BudgetAdminException extends DomainException<BudgetAdminExceptionCode> {
  constructor(code: BudgetAdminExceptionCode, message: string, field?: string) {
    super(code, message, field);
    this.name = 'BudgetAdminException';
  }

  get httpStatus(): number {
    return budgetAdminHttpStatus(this.code);
  }
}

/** The HTTP status each code is answered with. */
function budgetAdminHttpStatus(code: BudgetAdminExceptionCode): number {
  switch (code) {
    case BudgetAdminExceptionCode.InvalidBudget:
      return HttpStatus.BAD_REQUEST;
    case BudgetAdminExceptionCode.ScopeNotFound:
    case BudgetAdminExceptionCode.BudgetNotFound:
      return HttpStatus.NOT_FOUND;
    default:
      return unmappedCode(code);
  }
}
