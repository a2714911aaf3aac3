export enum CatalogExceptionCode {
  UpstreamNotFound = 'UPSTREAM_NOT_FOUND',
  NamespaceTaken = 'NAMESPACE_TAKEN',
  InvalidUpstream = 'INVALID_UPSTREAM',
  SyncFailed = 'SYNC_FAILED',
}

export class CatalogException extends Error {
  constructor(
    readonly code: CatalogExceptionCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'CatalogException';
  }
}
