export enum UpstreamExceptionCode {
  Unavailable = 'UPSTREAM_UNAVAILABLE',
  Timeout = 'UPSTREAM_TIMEOUT',
  CircuitOpen = 'UPSTREAM_CIRCUIT_OPEN',
  ProtocolError = 'UPSTREAM_ERROR',
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
