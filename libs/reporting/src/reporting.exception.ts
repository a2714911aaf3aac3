export enum ReportingExceptionCode {
  InvalidQuery = 'REPORT_INVALID_QUERY',
  ReportTooLarge = 'REPORT_TOO_LARGE',
  /** A filter asks for calls outside the caller's scope (another team, another user): 403. */
  OutOfScope = 'REPORT_OUT_OF_SCOPE',
  InvalidWebhook = 'ALERT_WEBHOOK_INVALID',
  WebhookNotFound = 'ALERT_WEBHOOK_NOT_FOUND',
  TooManyWebhooks = 'ALERT_WEBHOOK_LIMIT',
}

export class ReportingException extends Error {
  constructor(
    readonly code: ReportingExceptionCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'ReportingException';
  }
}
