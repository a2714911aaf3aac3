import { HttpStatus } from '@nestjs/common';
import { DomainException, unmappedCode } from '@tollgate/kernel';

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

export class CatalogException extends DomainException<CatalogExceptionCode> {
  constructor(code: CatalogExceptionCode, message: string, field?: string) {
    super(code, message, field);
    this.name = 'CatalogException';
  }

  get httpStatus(): number {
    return catalogHttpStatus(this.code);
  }
}

/** The HTTP status each code is answered with. */
function catalogHttpStatus(code: CatalogExceptionCode): number {
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
      return unmappedCode(code);
  }
}
