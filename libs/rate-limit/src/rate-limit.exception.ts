export enum RateLimitExceptionCode {
  InvalidRule = 'INVALID_RATE_LIMIT',
  ScopeNotFound = 'SCOPE_NOT_FOUND',
  RuleNotFound = 'RATE_LIMIT_NOT_FOUND',
}

export class RateLimitException extends Error {
  constructor(
    readonly code: RateLimitExceptionCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'RateLimitException';
  }
}
