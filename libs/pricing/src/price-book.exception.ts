import { HttpStatus } from '@nestjs/common';
import { DomainException } from '@tollgate/kernel';

export enum PriceBookExceptionCode {
  InvalidRule = 'PRICE_RULE_INVALID',
  UpstreamNotFound = 'PRICE_RULE_UPSTREAM_NOT_FOUND',
  RuleNotFound = 'PRICE_RULE_NOT_FOUND',
}

/** The HTTP status each code is answered with (a Record over the codes: a new code does not compile without one). */
const HTTP_STATUS: Record<PriceBookExceptionCode, number> = {
  [PriceBookExceptionCode.InvalidRule]: HttpStatus.BAD_REQUEST,
  [PriceBookExceptionCode.UpstreamNotFound]: HttpStatus.NOT_FOUND,
  [PriceBookExceptionCode.RuleNotFound]: HttpStatus.NOT_FOUND,
};

export class PriceBookException extends DomainException<PriceBookExceptionCode> {
  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }
}
