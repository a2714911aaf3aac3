export enum UpstreamExceptionCode {
  Unavailable = 'UPSTREAM_UNAVAILABLE',
  Timeout = 'UPSTREAM_TIMEOUT',
  CircuitOpen = 'UPSTREAM_CIRCUIT_OPEN',
  ProtocolError = 'UPSTREAM_ERROR',
  /** The upstream answered HTTP 401: the credential sent (a user's token, a static secret) was refused. */
  Unauthorized = 'UPSTREAM_UNAUTHORIZED',
}

export class UpstreamException extends Error {
  constructor(
    readonly code: UpstreamExceptionCode,
    message: string,
    readonly upstreamId: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'UpstreamException';
  }
}
