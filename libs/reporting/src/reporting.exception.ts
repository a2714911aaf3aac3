import { HttpStatus } from '@nestjs/common';
import { DomainException } from '@tollgate/kernel';

export enum ReportingExceptionCode {
  InvalidQuery = 'REPORT_INVALID_QUERY',
  ReportTooLarge = 'REPORT_TOO_LARGE',
  /** A filter asks for calls outside the caller's scope (another team, another user): 403. */
  OutOfScope = 'REPORT_OUT_OF_SCOPE',
  InvalidWebhook = 'ALERT_WEBHOOK_INVALID',
  WebhookNotFound = 'ALERT_WEBHOOK_NOT_FOUND',
  TooManyWebhooks = 'ALERT_WEBHOOK_LIMIT',
}

/** The HTTP status each code is answered with (a Record over the codes: a new code does not compile without one). */
const HTTP_STATUS: Record<ReportingExceptionCode, number> = {
  [ReportingExceptionCode.InvalidQuery]: HttpStatus.BAD_REQUEST,
  [ReportingExceptionCode.ReportTooLarge]: HttpStatus.BAD_REQUEST,
  [ReportingExceptionCode.InvalidWebhook]: HttpStatus.BAD_REQUEST,
  [ReportingExceptionCode.OutOfScope]: HttpStatus.FORBIDDEN,
  [ReportingExceptionCode.WebhookNotFound]: HttpStatus.NOT_FOUND,
  [ReportingExceptionCode.TooManyWebhooks]: HttpStatus.CONFLICT,
};

export class ReportingException extends DomainException<ReportingExceptionCode> {
  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }
}
