import { ArgumentsHost, Catch, ExceptionFilter, HttpStatus, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { mapError, statusText } from './error-mapping';
import { requestIdOf } from '../request/request-id.middleware';

export const ADMIN_REALM = 'tollgate-admin';

/** The JSON error body of every failed request. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  messages?: string[];
  field?: string;
  /** Always set: a domain code, or the status's name (`FORBIDDEN`, `NOT_FOUND`...). */
  code: string;
  /** The store that is down, on a 503 (`database` or `redis`). */
  dependency?: string;
  requestId: string;
}

/** Maps every error at the app's edge; unknown errors are logged with the request id and answered 500. */
@Catch()
export class AdminExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(AdminExceptionFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const requestId = requestIdOf(req);
    const mapped = mapError(exception);

    if (mapped.unexpected) {
      const stack = exception instanceof Error ? (exception.stack ?? exception.message) : String(exception);
      this.logger.error(`unhandled error requestId=${requestId} ${req.method} ${req.path}: ${stack}`);
    } else if (mapped.dependency) {
      const reason =
        exception instanceof Error ? exception.message.split('\n').filter(Boolean).pop() : String(exception);
      this.logger.warn(`${mapped.dependency} unavailable requestId=${requestId} ${req.method} ${req.path}: ${reason}`);
    }
    if (res.headersSent) return;

    const body: ErrorBody = {
      statusCode: mapped.status,
      error: statusText(mapped.status),
      message: mapped.unexpected ? `internal error (request id ${requestId})` : mapped.message,
      code: mapped.code,
      requestId,
    };
    if (mapped.messages && mapped.messages.length > 1) body.messages = mapped.messages;
    if (mapped.field) body.field = mapped.field;
    if (mapped.dependency) body.dependency = mapped.dependency;
    if (mapped.retryAfterSeconds) res.setHeader('Retry-After', String(mapped.retryAfterSeconds));

    if (mapped.status === HttpStatus.UNAUTHORIZED) {
      // RFC 6750: a presented but unusable token is `invalid_token`; a missing one gets the bare challenge.
      const presented = typeof req.headers.authorization === 'string' && req.headers.authorization.length > 0;
      res.setHeader(
        'WWW-Authenticate',
        presented ? `Bearer realm="${ADMIN_REALM}", error="invalid_token"` : `Bearer realm="${ADMIN_REALM}"`,
      );
    }
    res.status(mapped.status).json(body);
  }
}
