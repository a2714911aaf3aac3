import { HttpStatus } from '@nestjs/common';
import { DomainException, unmappedCode } from '@tollgate/kernel';

export enum ReportingExceptionCode {
  InvalidQuery = 'REPORT_INVALID_QUERY',
  ReportTooLarge = 'REPORT_TOO_LARGE',
  /** A filter asks for calls outside the caller's scope (another team, another user): 403. */
  OutOfScope = 'REPORT_OUT_OF_SCOPE',
  InvalidWebhook = 'ALERT_WEBHOOK_INVALID',
  WebhookNotFound = 'ALERT_WEBHOOK_NOT_FOUND',
  TooManyWebhooks = 'ALERT_WEBHOOK_LIMIT',
}

export class ReportingException extends DomainException<ReportingExceptionCode> {
  constructor(code: ReportingExceptionCode, message: string, field?: string) {
    super(code, message, field);
    this.name = 'ReportingException';
  }

  get httpStatus(): number {
    return reportingHttpStatus(this.code);
  }
}

/** The HTTP status each code is answered with. */
function reportingHttpStatus(code: ReportingExceptionCode): number {
  switch (code) {
    case ReportingExceptionCode.InvalidQuery:
    case ReportingExceptionCode.ReportTooLarge:
    case ReportingExceptionCode.InvalidWebhook:
      return HttpStatus.BAD_REQUEST;
    case ReportingExceptionCode.OutOfScope:
      return HttpStatus.FORBIDDEN;
    case ReportingExceptionCode.WebhookNotFound:
      return HttpStatus.NOT_FOUND;
    case ReportingExceptionCode.TooManyWebhooks:
      return HttpStatus.CONFLICT;
    default:
      return unmappedCode(code);
  }
}
