import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from './secret-box';
import { SecretBoxException, SecretBoxExceptionCode } from './secret-box.exception';

const k1 = { id: 'k1', key: randomBytes(32) };
const k2 = { id: 'k2', key: randomBytes(32) };

describe('SecretBox', () => {
  it('should open what it sealed when the same keys are configured', () => {
    const box = new SecretBox([k1]);
    const sealed = box.seal('whsec_abc', 'webhook:1');
    expect(sealed).not.toContain('whsec_abc');
    expect(box.open(sealed, 'webhook:1')).toBe('whsec_abc');
    expect(box.openJson(box.sealJson({ a: 1 }, 'c'), 'c')).toEqual({ a: 1 });
  });

  it('should seal with the first key and open with any configured key when keys rotate', () => {
    const old = new SecretBox([k1]).seal('s', 'c');
    expect(SecretBox.keyIdOf(old)).toBe('k1');
    expect(new SecretBox([k2, k1]).open(old, 'c')).toBe('s');
    expect(SecretBox.keyIdOf(new SecretBox([k2, k1]).seal('s', 'c'))).toBe('k2');
  });

  it('should refuse a value sealed for another context or tampered with', () => {
    const box = new SecretBox([k1]);
    const sealed = box.seal('s', 'webhook:1');
    expect(() => box.open(sealed, 'webhook:2')).toThrow(SecretBoxException);
    const parts = sealed.split(':');
    // Flip one bit of the real ciphertext: a fixed replacement equals it one time in 256.
    const ciphertext = Buffer.from(parts[4], 'base64url');
    ciphertext[0] ^= 1;
    parts[4] = ciphertext.toString('base64url');
    expect(() => box.open(parts.join(':'), 'webhook:1')).toThrow(
      expect.objectContaining({ code: SecretBoxExceptionCode.Tampered }),
    );
  });

  it('should name the missing key when a value was sealed under a key no longer configured', () => {
    expect(() => new SecretBox([k2]).open(new SecretBox([k1]).seal('s', 'c'), 'c')).toThrow(/unknown key "k1"/);
  });
});
