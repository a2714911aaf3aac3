export enum CatalogExceptionCode {
  UpstreamNotFound = 'UPSTREAM_NOT_FOUND',
  NamespaceTaken = 'NAMESPACE_TAKEN',
  InvalidUpstream = 'INVALID_UPSTREAM',
  SyncFailed = 'SYNC_FAILED',
  ToolNotFound = 'TOOL_NOT_FOUND',
  /** The definition under review changed since the reviewer looked at it. */
  DefinitionChanged = 'DEFINITION_CHANGED',
  /** Exposing an upstream unprefixed would give one exposed name to two items. */
  NameCollision = 'NAME_COLLISION',
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
