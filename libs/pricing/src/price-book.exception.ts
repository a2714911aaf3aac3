import { HttpStatus } from '@nestjs/common';
import { DomainException, unmappedCode } from '@tollgate/kernel';

export enum PriceBookExceptionCode {
  InvalidRule = 'PRICE_RULE_INVALID',
  UpstreamNotFound = 'PRICE_RULE_UPSTREAM_NOT_FOUND',
  RuleNotFound = 'PRICE_RULE_NOT_FOUND',
}

export class PriceBookException extends DomainException<PriceBookExceptionCode> {
  constructor(code: PriceBookExceptionCode, message: string, field?: string) {
    super(code, message, field);
    this.name = 'PriceBookException';
  }

  get httpStatus(): number {
    return priceBookHttpStatus(this.code);
  }
}

/** The HTTP status each code is answered with. */
function priceBookHttpStatus(code: PriceBookExceptionCode): number {
  switch (code) {
    case PriceBookExceptionCode.InvalidRule:
      return HttpStatus.BAD_REQUEST;
    case PriceBookExceptionCode.UpstreamNotFound:
    case PriceBookExceptionCode.RuleNotFound:
      return HttpStatus.NOT_FOUND;
    default:
      return unmappedCode(code);
  }
}
