import { HttpStatus } from '@nestjs/common';
import { DomainException, unmappedCode } from '@tollgate/kernel';

export enum PolicyAdminExceptionCode {
  InvalidPattern = 'POLICY_INVALID_PATTERN',
  InvalidSetting = 'POLICY_INVALID_SETTING',
  ScopeNotFound = 'POLICY_SCOPE_NOT_FOUND',
}

export class PolicyAdminException extends DomainException<PolicyAdminExceptionCode> {
  constructor(code: PolicyAdminExceptionCode, message: string, field?: string) {
    super(code, message, field);
    this.name = 'PolicyAdminException';
  }

  get httpStatus(): number {
    return policyHttpStatus(this.code);
  }
}

/** The HTTP status each code is answered with. */
function policyHttpStatus(code: PolicyAdminExceptionCode): number {
  switch (code) {
    case PolicyAdminExceptionCode.InvalidPattern:
    case PolicyAdminExceptionCode.InvalidSetting:
      return HttpStatus.BAD_REQUEST;
    case PolicyAdminExceptionCode.ScopeNotFound:
      return HttpStatus.NOT_FOUND;
    default:
      return unmappedCode(code);
  }
}
