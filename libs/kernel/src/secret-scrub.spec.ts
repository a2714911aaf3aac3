import { describe, expect, it } from 'vitest';
import { REDACTED, scrubSecrets } from './secret-scrub';

describe('scrubSecrets', () => {
  it('should mask values of secret-named keys whatever their spelling', () => {
    expect(
      scrubSecrets({
        api_key: 'abc',
        'X-Api-Key': 'abc',
        clientSecret: 'abc',
        session_token: 'abc',
        password: 'p',
        q: 'ok',
      }),
    ).toEqual({
      api_key: REDACTED,
      'X-Api-Key': REDACTED,
      clientSecret: REDACTED,
      session_token: REDACTED,
      password: REDACTED,
      q: 'ok',
    });
  });

  it('should keep only the names of a header map', () => {
    expect(scrubSecrets({ headers: { Authorization: 'Bearer x', Accept: 'json' } })).toEqual({
      headerNames: ['Accept', 'Authorization'],
    });
  });

  it('should mask credential-shaped text inside any string, nested', () => {
    const key = `tg_${'a'.repeat(40)}`;
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
    const out = JSON.stringify(
      scrubSecrets({
        text: `use ${key} or Bearer abcdefghij12345 or ${jwt}`,
        list: ['sk-ant-0123456789abcdefghij', `ghp_${'Z'.repeat(36)}`, 'AKIAABCDEFGHIJKLMNOP', 'xoxb-1234567890-abc'],
      }),
    );
    for (const secret of [key, 'abcdefghij12345', jwt, 'sk-ant', 'ghp_', 'AKIA', 'xoxb'])
      expect(out).not.toContain(secret);
  });

  it('should leave ordinary words, numbers and short ids alone', () => {
    const value = { message: 'create an issue in repo tollgate', count: 3, id: 'sk-1', ok: true };
    expect(scrubSecrets(value)).toEqual(value);
  });
});
