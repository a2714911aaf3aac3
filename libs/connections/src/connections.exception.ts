import { HttpStatus } from '@nestjs/common';
import { DomainException } from '@tollgate/kernel';

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

/** The HTTP status each code is answered with (a Record over the codes: a new code does not compile without one). */
const HTTP_STATUS: Record<ConnectionsExceptionCode, number> = {
  [ConnectionsExceptionCode.UpstreamNotFound]: HttpStatus.NOT_FOUND,
  [ConnectionsExceptionCode.UserNotFound]: HttpStatus.NOT_FOUND,
  [ConnectionsExceptionCode.ConnectionNotFound]: HttpStatus.NOT_FOUND,
  [ConnectionsExceptionCode.NotPerUserOAuth]: HttpStatus.BAD_REQUEST,
  [ConnectionsExceptionCode.InvalidState]: HttpStatus.BAD_REQUEST,
  [ConnectionsExceptionCode.AuthorizationFailed]: HttpStatus.BAD_REQUEST,
  [ConnectionsExceptionCode.NotConfigured]: HttpStatus.SERVICE_UNAVAILABLE,
  [ConnectionsExceptionCode.DiscoveryFailed]: HttpStatus.BAD_GATEWAY,
};

export class ConnectionsException extends DomainException<ConnectionsExceptionCode> {
  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }
}
