import { createECDH, createHash, hkdfSync } from 'node:crypto';

/** P-256's group order: a derived private scalar must be below it (and not zero). */
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

export interface OAuthKeyMaterial {
  /** The private signing JWK set (ES256), for oidc-provider; never logged or served. */
  jwks: { keys: Record<string, string>[] };
  /** Keys that sign the authorization server's cookies. */
  cookieKeys: string[];
}

/**
 * Derives the authorization server's signing key and cookie keys from a deployment secret, so
 * every admin-api replica has the same keys and nothing is stored. Changing the secret
 * invalidates sessions and cookies in flight, not access tokens (they are opaque).
 */
export function deriveOAuthKeys(secret: string | Buffer): OAuthKeyMaterial {
  let d: Buffer | undefined;
  for (let counter = 0; !d; counter++) {
    const candidate = Buffer.from(hkdfSync('sha256', secret, 'tollgate-oauth', `signing-key-es256:${counter}`, 32));
    const n = BigInt(`0x${candidate.toString('hex')}`);
    if (n > 0n && n < P256_ORDER) d = candidate;
  }
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const pub = ecdh.getPublicKey(); // 0x04 || x || y
  const x = pub.subarray(1, 33).toString('base64url');
  const y = pub.subarray(33, 65).toString('base64url');
  const kid = createHash('sha256').update(pub).digest('base64url').slice(0, 16);
  const cookieKey = Buffer.from(hkdfSync('sha256', secret, 'tollgate-oauth', 'cookie-key', 32)).toString('base64url');
  return {
    jwks: { keys: [{ kty: 'EC', crv: 'P-256', x, y, d: d.toString('base64url'), kid, alg: 'ES256', use: 'sig' }] },
    cookieKeys: [cookieKey],
  };
}
