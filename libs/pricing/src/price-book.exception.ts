export enum PriceBookExceptionCode {
  InvalidRule = 'PRICE_RULE_INVALID',
  UpstreamNotFound = 'PRICE_RULE_UPSTREAM_NOT_FOUND',
  RuleNotFound = 'PRICE_RULE_NOT_FOUND',
}

export class PriceBookException extends Error {
  constructor(
    readonly code: PriceBookExceptionCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'PriceBookException';
  }
}
