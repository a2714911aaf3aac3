import { HttpStatus } from '@nestjs/common';
import { DomainException } from '@tollgate/kernel';

export enum RateLimitExceptionCode {
  InvalidRule = 'INVALID_RATE_LIMIT',
  ScopeNotFound = 'SCOPE_NOT_FOUND',
  RuleNotFound = 'RATE_LIMIT_NOT_FOUND',
}

/** The HTTP status each code is answered with (a Record over the codes: a new code does not compile without one). */
const HTTP_STATUS: Record<RateLimitExceptionCode, number> = {
  [RateLimitExceptionCode.InvalidRule]: HttpStatus.BAD_REQUEST,
  [RateLimitExceptionCode.ScopeNotFound]: HttpStatus.NOT_FOUND,
  [RateLimitExceptionCode.RuleNotFound]: HttpStatus.NOT_FOUND,
};

export class RateLimitException extends DomainException<RateLimitExceptionCode> {
  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }
}
