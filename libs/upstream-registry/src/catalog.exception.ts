import { HttpStatus } from '@nestjs/common';
import { DomainException } from '@tollgate/kernel';

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

/** The HTTP status each code is answered with (a Record over the codes: a new code does not compile without one). */
const HTTP_STATUS: Record<CatalogExceptionCode, number> = {
  [CatalogExceptionCode.UpstreamNotFound]: HttpStatus.NOT_FOUND,
  [CatalogExceptionCode.ToolNotFound]: HttpStatus.NOT_FOUND,
  [CatalogExceptionCode.NamespaceTaken]: HttpStatus.CONFLICT,
  [CatalogExceptionCode.DefinitionChanged]: HttpStatus.CONFLICT,
  [CatalogExceptionCode.NameCollision]: HttpStatus.CONFLICT,
  [CatalogExceptionCode.InvalidUpstream]: HttpStatus.BAD_REQUEST,
  [CatalogExceptionCode.SyncFailed]: HttpStatus.BAD_GATEWAY,
};

export class CatalogException extends DomainException<CatalogExceptionCode> {
  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }
}
