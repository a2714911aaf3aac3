import { ForbiddenException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { BudgetAdminException, BudgetAdminExceptionCode } from '@tollgate/budget';
import { CatalogException, CatalogExceptionCode } from '@tollgate/upstream-registry';
import { IdentityException, IdentityExceptionCode } from '@tollgate/identity';
import { PolicyAdminException, PolicyAdminExceptionCode } from '@tollgate/policy';
import { PriceBookException, PriceBookExceptionCode } from '@tollgate/pricing';
import { describe, expect, it } from 'vitest';
import { mapError } from './error-mapping';
import { FieldValidationException } from './field-validation.exception';

describe('mapError', () => {
  it('should give every answer a code: the exception’s own, else the status’s name', () => {
    expect(mapError(new NotFoundException('no such thing')).code).toBe('NOT_FOUND');
    expect(mapError(new ForbiddenException({ message: 'no', code: 'STDIO_NOT_ALLOWED' }))).toMatchObject({
      status: 403,
      message: 'no',
      code: 'STDIO_NOT_ALLOWED',
    });
    expect(mapError(new PayloadTooLargeException()).code).toBe('PAYLOAD_TOO_LARGE');
    expect(mapError(new Error('boom'))).toMatchObject({ status: 500, code: 'INTERNAL_SERVER_ERROR' });
  });

  it('should map every identity code to a client status', () => {
    for (const code of Object.values(IdentityExceptionCode)) {
      expect(mapError(new IdentityException(code, 'x')).status).toBeLessThan(500);
    }
    expect(
      mapError(new IdentityException(IdentityExceptionCode.KeyNotFound, 'key k not found', 'keyId')),
    ).toMatchObject({ status: 404, field: 'keyId', code: 'KEY_NOT_FOUND' });
    expect(mapError(new IdentityException(IdentityExceptionCode.Conflict, 'dup', 'slug')).status).toBe(409);
  });

  it('should map catalog, policy, price book and budget codes', () => {
    expect(mapError(new CatalogException(CatalogExceptionCode.UpstreamNotFound, 'x')).status).toBe(404);
    expect(mapError(new CatalogException(CatalogExceptionCode.NamespaceTaken, 'x', 'namespace'))).toMatchObject({
      status: 409,
      field: 'namespace',
    });
    expect(mapError(new CatalogException(CatalogExceptionCode.InvalidUpstream, 'x', 'url')).status).toBe(400);
    expect(mapError(new PolicyAdminException(PolicyAdminExceptionCode.InvalidPattern, 'x', 'allow[0]'))).toMatchObject({
      status: 400,
      field: 'allow[0]',
    });
    expect(mapError(new PolicyAdminException(PolicyAdminExceptionCode.ScopeNotFound, 'x')).status).toBe(404);
    expect(mapError(new PriceBookException(PriceBookExceptionCode.InvalidRule, 'x', 'effectiveFrom')).status).toBe(400);
    expect(mapError(new PriceBookException(PriceBookExceptionCode.UpstreamNotFound, 'x')).status).toBe(404);
    expect(mapError(new BudgetAdminException(BudgetAdminExceptionCode.BudgetNotFound, 'x')).status).toBe(404);
  });

  it('should keep the field and every message of a validation failure', () => {
    expect(mapError(new FieldValidationException('name', ['a', 'b']))).toMatchObject({
      status: 400,
      field: 'name',
      messages: ['a', 'b'],
      message: 'a; b',
    });
  });

  it('should pass Nest HTTP exceptions through with their status', () => {
    expect(mapError(new NotFoundException('Cannot GET /x'))).toMatchObject({ status: 404, message: 'Cannot GET /x' });
  });

  it('should answer 500, never 400, when the error is unknown', () => {
    expect(mapError(new Error('boom'))).toMatchObject({ status: 500, unexpected: true });
    expect(mapError(new TypeError('x')).status).toBe(500);
    expect(mapError('a string').status).toBe(500);
  });

  it('should map a too-large body to 413', () => {
    expect(mapError(Object.assign(new Error('too large'), { type: 'entity.too.large', status: 413 })).status).toBe(413);
  });
});
