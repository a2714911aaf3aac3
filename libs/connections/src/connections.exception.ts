import { HttpStatus } from '@nestjs/common';
import { DomainException, unmappedCode } from '@tollgate/kernel';

export enum ConnectionsExceptionCode {
  UpstreamNotFound = 'UPSTREAM_NOT_FOUND',
  UserNotFound = 'USER_NOT_FOUND',
  ConnectionNotFound = 'CONNECTION_NOT_FOUND',
  /** The upstream is not set up for per-user OAuth. */
  NotPerUserOAuth = 'NOT_PER_USER_OAUTH',
  /** ADMIN_PUBLIC_URL is not configured, so there is no redirect URI. */
  NotConfigured = 'OAUTH_NOT_CONFIGURED',
  /** The upstream's authorization server could not be discovered or refused registration. */
  DiscoveryFailed = 'OAUTH_DISCOVERY_FAILED',
  /** Unknown, used or expired state on the callback. */
  InvalidState = 'OAUTH_INVALID_STATE',
  /** The authorization server refused the code, or the user denied access. */
  AuthorizationFailed = 'OAUTH_AUTHORIZATION_FAILED',
}

export class ConnectionsException extends DomainException<ConnectionsExceptionCode> {
  constructor(code: ConnectionsExceptionCode, message: string, field?: string) {
    super(code, message, field);
    this.name = 'ConnectionsException';
  }

  get httpStatus(): number {
    return connectionsHttpStatus(this.code);
  }
}

/** The HTTP status each code is answered with. */
function connectionsHttpStatus(code: ConnectionsExceptionCode): number {
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
      return unmappedCode(code);
  }
}
