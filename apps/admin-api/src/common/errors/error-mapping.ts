import { HttpException, HttpStatus } from '@nestjs/common';
import {
  DEPENDENCY_RETRY_AFTER_SECONDS,
  DomainException,
  StaleWriteException,
  UnavailableDependency,
  unavailableDependency,
} from '@tollgate/kernel';
import { STATUS_CODES } from 'node:http';
import { FieldValidationException } from './field-validation.exception';

/** What the client is told about a failed request (the request id is added by the filter). */
export interface MappedError {
  status: number;
  message: string;
  /** Every message when there were several (validation). */
  messages?: string[];
  field?: string;
  /** The domain error code, so clients can branch without parsing messages. */
  code?: string;
  /** Unknown errors are logged with their stack and answered with a bare 500. */
  unexpected?: boolean;
  /** The store that is down (503): the client may retry after `retryAfterSeconds`. */
  dependency?: UnavailableDependency;
  retryAfterSeconds?: number;
}

/** Errors raised by Express's body parser before Nest sees the request. */
interface BodyParserError {
  type: string;
  status: number;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as BodyParserError).type === 'string' &&
    typeof (err as BodyParserError).status === 'number'
  );
}

function httpExceptionMessage(err: HttpException): { message: string; messages?: string[] } {
  const body = err.getResponse();
  if (typeof body === 'string') return { message: body };
  const raw = (body as { message?: unknown }).message;
  if (Array.isArray(raw)) return { message: raw.map(String).join('; '), messages: raw.map(String) };
  if (typeof raw === 'string') return { message: raw };
  return { message: err.message };
}

/**
 * Maps any error to what the client sees. A lib's refusal (`DomainException`) carries its status,
 * decided beside the lib's codes in an exhaustive switch (a new code fails type-checking until it
 * has one); anything unknown is a 500, never a 400. Every
 * answer has a `code`: the domain's, one the exception carries (`{ message, code }`), or else the
 * status's name (`FORBIDDEN`, `NOT_FOUND`, `PAYLOAD_TOO_LARGE`...), so clients branch on codes only.
 */
export function mapError(err: unknown): MappedError & { code: string } {
  const mapped = mapKnownError(err);
  return { ...mapped, code: mapped.code ?? codeOfStatus(mapped.status) };
}

/** `Not Found` -> `NOT_FOUND`. */
export function codeOfStatus(status: number): string {
  return statusText(status)
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
}

function mapKnownError(err: unknown): MappedError {
  if (err instanceof FieldValidationException) {
    return {
      status: HttpStatus.BAD_REQUEST,
      message: err.messages.join('; '),
      messages: err.messages,
      field: err.field,
      code: 'VALIDATION_FAILED',
    };
  }
  if (err instanceof HttpException) {
    const code = (err.getResponse() as { code?: unknown }).code;
    return { status: err.getStatus(), ...httpExceptionMessage(err), ...(typeof code === 'string' ? { code } : {}) };
  }
  if (err instanceof StaleWriteException)
    return { status: HttpStatus.PRECONDITION_FAILED, message: err.message, field: 'If-Match', code: 'STALE_WRITE' };
  if (err instanceof DomainException) {
    const mapped: MappedError = { status: err.httpStatus, message: err.message, field: err.field, code: err.code };
    return err.dependency
      ? { ...mapped, dependency: err.dependency, retryAfterSeconds: DEPENDENCY_RETRY_AFTER_SECONDS }
      : mapped;
  }
  if (isBodyParserError(err)) {
    if (err.type === 'entity.parse.failed')
      return {
        status: HttpStatus.BAD_REQUEST,
        message: 'request body is not valid JSON',
        field: 'body',
        code: 'INVALID_JSON',
      };
    if (err.type === 'entity.too.large')
      return { status: HttpStatus.PAYLOAD_TOO_LARGE, message: 'request body is too large', field: 'body' };
    if (err.status >= 400 && err.status < 500)
      return { status: err.status, message: `request body could not be read (${err.type})`, field: 'body' };
  }
  const dependency = unavailableDependency(err);
  if (dependency) {
    return {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      message: `${dependency === 'database' ? 'the database' : 'Redis'} is unavailable; retry in a few seconds`,
      code: 'DEPENDENCY_UNAVAILABLE',
      dependency,
      retryAfterSeconds: DEPENDENCY_RETRY_AFTER_SECONDS,
    };
  }
  return { status: HttpStatus.INTERNAL_SERVER_ERROR, message: 'internal error', unexpected: true };
}

export function statusText(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}
