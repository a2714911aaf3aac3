import { describe, expect, it } from 'vitest';
import { deriveOAuthKeys } from './oauth-keys';

describe('deriveOAuthKeys', () => {
  it('should derive the same ES256 key and cookie key on every replica from the same secret', () => {
    const a = deriveOAuthKeys(Buffer.alloc(32, 7));
    const b = deriveOAuthKeys(Buffer.alloc(32, 7));
    expect(a).toEqual(b);
    expect(a.jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
  });

  it('should derive other keys from another secret', () => {
    const a = deriveOAuthKeys(Buffer.alloc(32, 7));
    const b = deriveOAuthKeys(Buffer.alloc(32, 8));
    expect(a.jwks.keys[0].d).not.toBe(b.jwks.keys[0].d);
    expect(a.cookieKeys[0]).not.toBe(b.cookieKeys[0]);
  });

  it('should make a key pair that signs and verifies', async () => {
    const { importJWK, SignJWT, jwtVerify } = await import('jose');
    const jwk = deriveOAuthKeys('a deployment secret').jwks.keys[0];
    const { d: _d, ...publicJwk } = jwk;
    const token = await new SignJWT({ x: 1 }).setProtectedHeader({ alg: 'ES256' }).sign(await importJWK(jwk, 'ES256'));
    await expect(jwtVerify(token, await importJWK(publicJwk, 'ES256'))).resolves.toMatchObject({ payload: { x: 1 } });
  });
});
