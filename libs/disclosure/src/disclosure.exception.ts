export enum DisclosureExceptionCode {
  InvalidCursor = 'INVALID_CURSOR',
  BudgetTooSmall = 'BUDGET_TOO_SMALL',
  InvalidRequest = 'INVALID_REQUEST',
}

export class DisclosureException extends Error {
  constructor(
    readonly code: DisclosureExceptionCode,
    message: string,
    readonly details?: Record<string, number | string>,
  ) {
    super(message);
    this.name = 'DisclosureException';
  }
}
