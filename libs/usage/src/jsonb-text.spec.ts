import { describe, expect, it } from 'vitest';
import { jsonbText } from './jsonb-text';

describe('jsonbText: JSON that Postgres jsonb takes', () => {
  it('should drop NUL and keep an escaped backslash followed by "u0000"', () => {
    expect(JSON.parse(jsonbText({ q: 'a\u0000b', path: 'c:\\u0000d' }))).toEqual({ q: 'ab', path: 'c:\\u0000d' });
  });

  it('should turn a lone surrogate, in a value or a key, into U+FFFD and keep a surrogate pair', () => {
    const json = jsonbText({ ['k\udc00']: ['x\ud800y', 'z\ud83d', '😀', 'a\\ud800'] });
    expect(JSON.parse(json)).toEqual({ ['k\ufffd']: ['x\ufffdy', 'z\ufffd', '😀', 'a\\ud800'] });
  });

  it('should write anything without NUL or lone surrogates as JSON.stringify does', () => {
    const value = { a: [1, 'two', { three: null }], b: 'ü€😀' };
    expect(jsonbText(value)).toBe(JSON.stringify(value));
  });
});
