import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { SecretBoxException, SecretBoxExceptionCode } from './secret-box.exception';

/** A 32-byte AES-256-GCM key and the id stored beside what it encrypts. */
export interface SecretBoxKey {
  id: string;
  key: Buffer;
}

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals secrets with AES-256-GCM: `v1:<keyId>:<iv>:<tag>:<ciphertext>` (base64url parts). The
 * first key seals, every configured key opens (rotation). `context` is bound as additional data,
 * so a sealed value copied to another row (another org, another upstream) does not open there.
 */
export class SecretBox {
  constructor(private readonly keys: readonly SecretBoxKey[]) {
    if (keys.length === 0) throw new SecretBoxException(SecretBoxExceptionCode.NoKeys, 'no encryption key configured');
  }

  /** The id of the key new values are sealed with. */
  get currentKeyId(): string {
    return this.keys[0].id;
  }

  seal(plaintext: string, context: string): string {
    const active = this.keys[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', active.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      VERSION,
      active.id,
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      ciphertext.toString('base64url'),
    ].join(':');
  }

  open(sealed: string, context: string): string {
    const parts = sealed.split(':');
    if (parts.length !== 5 || parts[0] !== VERSION)
      throw new SecretBoxException(SecretBoxExceptionCode.Malformed, 'sealed value is malformed');
    const [, keyId, iv, tag, ciphertext] = parts;
    const key = this.keys.find((k) => k.id === keyId);
    if (!key) throw new SecretBoxException(SecretBoxExceptionCode.UnknownKey, `sealed with unknown key "${keyId}"`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      // GCM only says "unable to authenticate": the value or its context was changed.
      throw new SecretBoxException(SecretBoxExceptionCode.Tampered, 'sealed value failed authentication');
    }
  }

  sealJson(value: unknown, context: string): string {
    return this.seal(JSON.stringify(value), context);
  }

  openJson<T>(sealed: string, context: string): T {
    return JSON.parse(this.open(sealed, context)) as T;
  }

  /** The id of the key that sealed a value, to find values still sealed under a retired key. */
  static keyIdOf(sealed: string): string | undefined {
    const parts = sealed.split(':');
    return parts.length === 5 && parts[0] === VERSION ? parts[1] : undefined;
  }
}
