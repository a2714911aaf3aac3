import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Tollgate-Signature';
export const TIMESTAMP_HEADER = 'X-Tollgate-Timestamp';

/** A fresh signing secret, shown to the admin once. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/**
 * `sha256=<hex HMAC-SHA-256 of "<timestamp>.<body>">`. The timestamp (unix seconds) is signed too,
 * so a receiver that rejects old timestamps cannot be fed a replayed request.
 */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** What a receiver does (documented, and used by the tests): constant-time compare within a tolerance. */
export function verifyWebhook(
  secret: string,
  timestampHeader: string,
  body: string,
  signatureHeader: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const timestamp = Number(timestampHeader);
  if (!Number.isSafeInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, timestamp, body));
  const given = Buffer.from(signatureHeader);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
