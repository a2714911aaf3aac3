import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function base62(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) out += BASE62[b % 62];
  return out;
}

export interface IssuedSecret {
  /** The whole secret, shown once to its owner. */
  secret: string;
  /** The visible start of the secret, stored and shown in listings. */
  prefix: string;
  /** HMAC-SHA-256 of the secret under the deployment's pepper; what the database keeps. */
  hash: string;
}

/** Virtual keys are `tg_...`, admin tokens `tga_...`: 40 random base62 characters (~238 bits). */
export function issueSecret(kind: 'tg' | 'tga', pepper: string): IssuedSecret {
  const secret = `${kind}_${base62(randomBytes(40))}`;
  return { secret, prefix: secret.slice(0, kind.length + 7), hash: hashSecret(secret, pepper) };
}

export function hashSecret(secret: string, pepper: string): string {
  return createHmac('sha256', pepper).update(secret).digest('hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

export function looksLikeVirtualKey(secret: string): boolean {
  return /^tg_[0-9A-Za-z]{40}$/.test(secret);
}
