import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signWebhook, verifyWebhook } from './webhook-signature';

describe('webhook signature', () => {
  it('should sign "<timestamp>.<body>" with HMAC-SHA-256 as sha256=<hex>', () => {
    const expected = createHmac('sha256', 'whsec_test').update('1700000000.{"a":1}').digest('hex');
    expect(signWebhook('whsec_test', 1700000000, '{"a":1}')).toBe(`sha256=${expected}`);
  });

  it('should verify a fresh signature and reject a changed body, another secret or an old timestamp', () => {
    const secret = newWebhookSecret();
    const sig = signWebhook(secret, 1000, 'body');
    expect(verifyWebhook(secret, '1000', 'body', sig, 1010)).toBe(true);
    expect(verifyWebhook(secret, '1000', 'body!', sig, 1010)).toBe(false);
    expect(verifyWebhook(newWebhookSecret(), '1000', 'body', sig, 1010)).toBe(false);
    expect(verifyWebhook(secret, '1000', 'body', sig, 2000)).toBe(false);
  });

  it('should make a new secret each time', () => {
    expect(newWebhookSecret()).not.toBe(newWebhookSecret());
    expect(newWebhookSecret()).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  });
});
