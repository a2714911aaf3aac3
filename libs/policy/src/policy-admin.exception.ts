import { HttpStatus } from '@nestjs/common';
import { DomainException } from '@tollgate/kernel';

export enum PolicyAdminExceptionCode {
  InvalidPattern = 'POLICY_INVALID_PATTERN',
  InvalidSetting = 'POLICY_INVALID_SETTING',
  ScopeNotFound = 'POLICY_SCOPE_NOT_FOUND',
}

/** The HTTP status each code is answered with (a Record over the codes: a new code does not compile without one). */
const HTTP_STATUS: Record<PolicyAdminExceptionCode, number> = {
  [PolicyAdminExceptionCode.InvalidPattern]: HttpStatus.BAD_REQUEST,
  [PolicyAdminExceptionCode.InvalidSetting]: HttpStatus.BAD_REQUEST,
  [PolicyAdminExceptionCode.ScopeNotFound]: HttpStatus.NOT_FOUND,
};

export class PolicyAdminException extends DomainException<PolicyAdminExceptionCode> {
  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }
}
