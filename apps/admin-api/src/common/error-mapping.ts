import { HttpException, HttpStatus } from '@nestjs/common';
import { BudgetAdminException, BudgetAdminExceptionCode, BudgetException, BudgetExceptionCode } from '@tollgate/budget';
import { CatalogException, CatalogExceptionCode } from '@tollgate/catalog';
import { ConnectionsException, ConnectionsExceptionCode } from '@tollgate/connections';
import { IdentityException, IdentityExceptionCode } from '@tollgate/identity';
import { PolicyAdminException, PolicyAdminExceptionCode } from '@tollgate/policy';
import { PriceBookException, PriceBookExceptionCode } from '@tollgate/pricing';
import { RateLimitException, RateLimitExceptionCode } from '@tollgate/rate-limit';
import {
  DEPENDENCY_RETRY_AFTER_SECONDS,
  StaleWriteException,
  UnavailableDependency,
  unavailableDependency,
} from '@tollgate/kernel';
import { ReportingException, ReportingExceptionCode } from '@tollgate/reporting';
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

function assertNever(code: never): never {
  throw new Error(`unmapped error code: ${String(code)}`);
}

function identityStatus(code: IdentityExceptionCode): number {
  switch (code) {
    case IdentityExceptionCode.OrgNotFound:
    case IdentityExceptionCode.TeamNotFound:
    case IdentityExceptionCode.UserNotFound:
    case IdentityExceptionCode.KeyNotFound:
    case IdentityExceptionCode.AdminTokenNotFound:
      return HttpStatus.NOT_FOUND;
    case IdentityExceptionCode.NotATeamMember:
    case IdentityExceptionCode.InvalidEmailDomain:
      return HttpStatus.BAD_REQUEST;
    case IdentityExceptionCode.Conflict:
    case IdentityExceptionCode.KeyRevoked:
    case IdentityExceptionCode.OrgNotDisabled:
    case IdentityExceptionCode.UserOffboarded:
    case IdentityExceptionCode.EmailDomainClaimed:
      return HttpStatus.CONFLICT;
    default:
      return assertNever(code);
  }
}

function catalogStatus(code: CatalogExceptionCode): number {
  switch (code) {
    case CatalogExceptionCode.UpstreamNotFound:
    case CatalogExceptionCode.ToolNotFound:
      return HttpStatus.NOT_FOUND;
    case CatalogExceptionCode.NamespaceTaken:
    case CatalogExceptionCode.DefinitionChanged:
    case CatalogExceptionCode.NameCollision:
      return HttpStatus.CONFLICT;
    case CatalogExceptionCode.InvalidUpstream:
      return HttpStatus.BAD_REQUEST;
    case CatalogExceptionCode.SyncFailed:
      return HttpStatus.BAD_GATEWAY;
    default:
      return assertNever(code);
  }
}

function connectionsStatus(code: ConnectionsExceptionCode): number {
  switch (code) {
    case ConnectionsExceptionCode.UpstreamNotFound:
    case ConnectionsExceptionCode.UserNotFound:
    case ConnectionsExceptionCode.ConnectionNotFound:
      return HttpStatus.NOT_FOUND;
    case ConnectionsExceptionCode.NotPerUserOAuth:
    case ConnectionsExceptionCode.InvalidState:
    case ConnectionsExceptionCode.AuthorizationFailed:
      return HttpStatus.BAD_REQUEST;
    case ConnectionsExceptionCode.NotConfigured:
      return HttpStatus.SERVICE_UNAVAILABLE;
    case ConnectionsExceptionCode.DiscoveryFailed:
      return HttpStatus.BAD_GATEWAY;
    default:
      return assertNever(code);
  }
}

function policyStatus(code: PolicyAdminExceptionCode): number {
  switch (code) {
    case PolicyAdminExceptionCode.InvalidPattern:
    case PolicyAdminExceptionCode.InvalidSetting:
      return HttpStatus.BAD_REQUEST;
    case PolicyAdminExceptionCode.ScopeNotFound:
      return HttpStatus.NOT_FOUND;
    default:
      return assertNever(code);
  }
}

function priceBookStatus(code: PriceBookExceptionCode): number {
  switch (code) {
    case PriceBookExceptionCode.InvalidRule:
      return HttpStatus.BAD_REQUEST;
    case PriceBookExceptionCode.UpstreamNotFound:
    case PriceBookExceptionCode.RuleNotFound:
      return HttpStatus.NOT_FOUND;
    default:
      return assertNever(code);
  }
}

function budgetAdminStatus(code: BudgetAdminExceptionCode): number {
  switch (code) {
    case BudgetAdminExceptionCode.InvalidBudget:
      return HttpStatus.BAD_REQUEST;
    case BudgetAdminExceptionCode.ScopeNotFound:
    case BudgetAdminExceptionCode.BudgetNotFound:
      return HttpStatus.NOT_FOUND;
    default:
      return assertNever(code);
  }
}

function reportingStatus(code: ReportingExceptionCode): number {
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
      return assertNever(code);
  }
}

function rateLimitStatus(code: RateLimitExceptionCode): number {
  switch (code) {
    case RateLimitExceptionCode.InvalidRule:
      return HttpStatus.BAD_REQUEST;
    case RateLimitExceptionCode.ScopeNotFound:
    case RateLimitExceptionCode.RuleNotFound:
      return HttpStatus.NOT_FOUND;
    default:
      return assertNever(code);
  }
}

function budgetStatus(code: BudgetExceptionCode): number {
  switch (code) {
    case BudgetExceptionCode.CounterUnavailable:
      return HttpStatus.SERVICE_UNAVAILABLE;
    default:
      return assertNever(code);
  }
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
 * Maps any error to what the client sees. Domain codes go through exhaustive switches (a new
 * code fails type-checking until it is mapped); anything unknown is a 500, never a 400. Every
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
  if (err instanceof IdentityException)
    return { status: identityStatus(err.code), message: err.message, field: err.field, code: err.code };
  if (err instanceof CatalogException)
    return { status: catalogStatus(err.code), message: err.message, field: err.field, code: err.code };
  if (err instanceof ConnectionsException)
    return { status: connectionsStatus(err.code), message: err.message, field: err.field, code: err.code };
  if (err instanceof PolicyAdminException)
    return { status: policyStatus(err.code), message: err.message, field: err.field, code: err.code };
  if (err instanceof PriceBookException)
    return { status: priceBookStatus(err.code), message: err.message, field: err.field, code: err.code };
  if (err instanceof BudgetAdminException)
    return { status: budgetAdminStatus(err.code), message: err.message, field: err.field, code: err.code };
  if (err instanceof ReportingException)
    return { status: reportingStatus(err.code), message: err.message, field: err.field, code: err.code };
  if (err instanceof RateLimitException)
    return { status: rateLimitStatus(err.code), message: err.message, field: err.field, code: err.code };
  if (err instanceof BudgetException) {
    const mapped: MappedError = { status: budgetStatus(err.code), message: err.message, code: err.code };
    return mapped.status === HttpStatus.SERVICE_UNAVAILABLE
      ? { ...mapped, dependency: 'redis', retryAfterSeconds: DEPENDENCY_RETRY_AFTER_SECONDS }
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
