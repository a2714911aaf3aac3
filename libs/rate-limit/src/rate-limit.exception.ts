import { HttpStatus } from '@nestjs/common';
import { DomainException, unmappedCode } from '@tollgate/kernel';

export enum RateLimitExceptionCode {
  InvalidRule = 'INVALID_RATE_LIMIT',
  ScopeNotFound = 'SCOPE_NOT_FOUND',
  RuleNotFound = 'RATE_LIMIT_NOT_FOUND',
}

export class RateLimitException extends DomainException<RateLimitExceptionCode> {
  constructor(code: RateLimitExceptionCode, message: string, field?: string) {
    super(code, message, field);
    this.name = 'RateLimitException';
  }

  get httpStatus(): number {
    return rateLimitHttpStatus(this.code);
  }
}

/** The HTTP status each code is answered with. */
function rateLimitHttpStatus(code: RateLimitExceptionCode): number {
  switch (code) {
    case RateLimitExceptionCode.InvalidRule:
      return HttpStatus.BAD_REQUEST;
    case RateLimitExceptionCode.ScopeNotFound:
    case RateLimitExceptionCode.RuleNotFound:
      return HttpStatus.NOT_FOUND;
    default:
      return unmappedCode(code);
  }
}
