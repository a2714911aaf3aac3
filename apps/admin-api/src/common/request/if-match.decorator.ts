import { ExecutionContext, createParamDecorator } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { FieldValidationException } from '../errors/field-validation.exception';

/** The ETag of a versioned row (upstream, policy, budget): its version, as a strong entity tag. */
export function etagOf(version: number): string {
  return `"${version}"`;
}

/** Sets the ETag header of the answer, so the next write can send it back in If-Match. */
export function setEtag(res: Response, version: number): void {
  res.setHeader('ETag', etagOf(version));
}

/**
 * The version an If-Match header names (`"3"`, `W/"3"` or `3`), or undefined when the header is
 * absent or `*`: then the write is unconditional (last write wins). Anything else is a 400.
 */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '' || header.trim() === '*') return undefined;
  const m = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(header);
  if (!m)
    throw new FieldValidationException('If-Match', [
      'If-Match must be the ETag of the resource as last read, e.g. "3"',
    ]);
  return Number(m[1]);
}

const readIfMatch = createParamDecorator((_: unknown, ctx: ExecutionContext): number | undefined => {
  const header = ctx.switchToHttp().getRequest<Request>().headers['if-match'];
  return parseIfMatch(Array.isArray(header) ? header[0] : header);
});

/** The If-Match version of a conditional write, documented in the OpenAPI spec. */
export function IfMatch(): ParameterDecorator {
  return (target, key, index) => {
    readIfMatch()(target, key, index);
    if (key !== undefined) {
      const descriptor = Object.getOwnPropertyDescriptor(target, key)!;
      ApiHeader({
        name: 'If-Match',
        required: false,
        description:
          'The ETag from the last read: the write is refused with 412 (STALE_WRITE) if the resource changed since. Omitted: the write applies whatever the version (last write wins).',
      })(target, key, descriptor);
    }
  };
}
