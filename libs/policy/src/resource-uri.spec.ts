import { describe, expect, it } from 'vitest';
import { normalizeResourceUri } from './resource-uri';

const normal = (uri: string) => {
  const n = normalizeResourceUri(uri);
  expect(n.ok, `${uri}: ${n.ok ? '' : n.reason}`).toBe(true);
  return n.ok ? n.uri : '';
};

describe('normalizeResourceUri', () => {
  it('should resolve dot segments, also percent-encoded and mixed, as the upstream would', () => {
    for (const walk of [
      'file:///public/../secret/passwords.txt',
      'file:///public/%2e%2e/secret/passwords.txt',
      'file:///public/%2E%2e/secret/passwords.txt',
      'file:///public/.%2e/secret/passwords.txt',
      'file:///public/./../secret/passwords.txt',
      'file:///public/sub/../../secret/passwords.txt',
      'file:///public/../../../secret/passwords.txt',
      'FILE:///public/../secret/./passwords.txt',
      'file:///public/%2E%2E/secret/pass%77ords.txt',
    ])
      expect(normal(walk)).toBe('file:///secret/passwords.txt');
    // What WHATWG URL parsing (a naive upstream) makes of each is the same place.
    expect(new URL('file:///public/%2e%2e/secret/passwords.txt').pathname).toBe('/secret/passwords.txt');
  });

  it('should leave a plain URI as it is, and keep reserved encodings and the query', () => {
    for (const uri of [
      'file:///public/readme.txt',
      'demo://resource/static/document/architecture.md',
      'https://example.test/a%20b?x=%2F..&y=1#frag',
      'urn:isbn:0451450523',
    ])
      expect(normal(uri)).toBe(uri);
    expect(normal('HTTPS://Example.TEST/A/%7euser/%c3%a9')).toBe('https://example.test/A/~user/%C3%A9');
  });

  it('should refuse a URI whose meaning depends on how the upstream decodes it', () => {
    for (const uri of [
      'file:///public%2f..%2fsecret/passwords.txt',
      'file:///public/%2e%2e%2fsecret/passwords.txt',
      'file:///public/%252e%252e/secret/passwords.txt',
      'file:///public\\..\\secret\\passwords.txt',
      'file:///public/%5c../secret',
      'file:///public/%00/x',
      'file:///public/%zz',
      'public/../secret',
    ])
      expect(normalizeResourceUri(uri).ok, uri).toBe(false);
  });
});
