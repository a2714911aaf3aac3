import { describe, expect, it } from 'vitest';
import { exposedNames, exposedUris, parseNamespacedUri } from './catalog-exposure';

describe('catalog exposure', () => {
  it('should expose an unprefixed upstream bare and prefixed ones as <ns>__<name>', () => {
    const a = { namespace: 'conf', name: 'test_simple_text', unprefixed: true };
    const b = { namespace: 'gh', name: 'search', unprefixed: false };
    const { names, collisions } = exposedNames([a, b]);
    expect(names.get(a)).toBe('test_simple_text');
    expect(names.get(b)).toBe('gh__search');
    expect(collisions).toEqual([]);
  });

  it('should fall back to prefixed names when two unprefixed upstreams claim one name', () => {
    const a = { namespace: 'a', name: 'echo', unprefixed: true };
    const b = { namespace: 'b', name: 'echo', unprefixed: true };
    const c = { namespace: 'c', name: 'gh__x', unprefixed: true };
    const d = { namespace: 'gh', name: 'x', unprefixed: false };
    const { names, collisions } = exposedNames([a, b, c, d]);
    expect([names.get(a), names.get(b), names.get(c), names.get(d)]).toEqual([
      'a__echo',
      'b__echo',
      'c__gh__x',
      'gh__x',
    ]);
    expect(collisions).toEqual(['echo', 'gh__x']);
  });

  it('should keep a URI intact unless two upstreams list it', () => {
    const a = { namespace: 'a', uri: 'file:///x' };
    const b = { namespace: 'b', uri: 'file:///x' };
    const c = { namespace: 'b', uri: 'test://only' };
    const uris = exposedUris([a, b, c]);
    expect([uris.get(a), uris.get(b), uris.get(c)]).toEqual([
      'tollgate://a/file:///x',
      'tollgate://b/file:///x',
      'test://only',
    ]);
    expect(parseNamespacedUri('tollgate://b/file:///x')).toEqual({ namespace: 'b', uri: 'file:///x' });
    expect(parseNamespacedUri('file:///x')).toBeNull();
  });
});
