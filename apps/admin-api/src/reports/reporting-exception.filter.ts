import { ArgumentsHost, Catch, ExceptionFilter, HttpStatus } from '@nestjs/common';
import { ReportingException, ReportingExceptionCode } from '@tollgate/reporting';
import type { Request, Response } from 'express';
import type { ErrorBody } from '../common/admin-exception.filter';
import { statusText } from '../common/error-mapping';
import { requestIdOf } from '../common/request-id.middleware';

export function reportingStatus(code: ReportingExceptionCode): number {
  switch (code) {
    case ReportingExceptionCode.InvalidQuery:
    case ReportingExceptionCode.ReportTooLarge:
    case ReportingExceptionCode.InvalidWebhook:
      return HttpStatus.BAD_REQUEST;
    case ReportingExceptionCode.WebhookNotFound:
      return HttpStatus.NOT_FOUND;
    case ReportingExceptionCode.TooManyWebhooks:
      return HttpStatus.CONFLICT;
    default: {
      const unmapped: never = code;
      throw new Error(`unmapped error code: ${String(unmapped)}`);
    }
  }
}

/**
 * Maps the reporting lib's errors for the reports, alerts and reconcile controllers, in the same
 * body as AdminExceptionFilter (every other error still reaches that global filter).
 * TODO(owner of common/error-mapping.ts): fold this switch into mapError and drop the filter.
 */
@Catch(ReportingException)
export class ReportingExceptionFilter implements ExceptionFilter {
  catch(exception: ReportingException, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<Request>();
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) return;
    const status = reportingStatus(exception.code);
    const body: ErrorBody = { statusCode: status, error: statusText(status), message: exception.message, code: exception.code, requestId: requestIdOf(req) };
    if (exception.field) body.field = exception.field;
    res.status(status).json(body);
  }
}
