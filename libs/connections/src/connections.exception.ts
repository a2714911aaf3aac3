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

export class ConnectionsException extends Error {
  constructor(
    readonly code: ConnectionsExceptionCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'ConnectionsException';
  }
}
