import { randomBytes } from 'node:crypto';
import { SecretBox } from '@tollgate/secret-box';
import { describe, expect, it } from 'vitest';
import { openUpstreamSecrets, sealUpstreamSecrets } from './upstream-secrets';

const box = new SecretBox([{ id: 'k1', key: randomBytes(32) }]);

describe('upstream secrets', () => {
  it('should open the headers sealed for the same upstream and hide their values', () => {
    const sealed = sealUpstreamSecrets(box, 'u1', { headers: { Authorization: 'Bearer s3cret-value' } })!;
    expect(sealed).not.toContain('s3cret-value');
    expect(openUpstreamSecrets(box, { id: 'u1', secretsEnc: sealed })).toEqual({
      headers: { Authorization: 'Bearer s3cret-value' },
    });
  });

  it('should refuse secrets copied onto another upstream', () => {
    const sealed = sealUpstreamSecrets(box, 'u1', { oauthClientSecret: 'x' })!;
    expect(() => openUpstreamSecrets(box, { id: 'u2', secretsEnc: sealed })).toThrow();
  });

  it('should store nothing when there is no secret', () => {
    expect(sealUpstreamSecrets(box, 'u1', { headers: {} })).toBeNull();
    expect(openUpstreamSecrets(box, { id: 'u1', secretsEnc: null })).toEqual({});
  });
});
