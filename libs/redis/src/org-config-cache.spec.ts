import { describe, expect, it } from 'vitest';
import { OrgConfigCache } from './org-config-cache';

describe('OrgConfigCache', () => {
  it('should give a loaded value without a promise, as get resolves it, until it is invalidated', async () => {
    let loads = 0;
    const cache = new OrgConfigCache(async (orgId) => ({ orgId, load: ++loads }));
    expect(cache.peek('a')).toBeUndefined();
    const loaded = await cache.get('a');
    expect(cache.peek('a')).toBe(loaded);
    expect(cache.peek('b')).toBeUndefined();
    cache.invalidate('a');
    expect(cache.peek('a')).toBeUndefined();
    expect(await cache.get('a')).toEqual({ orgId: 'a', load: 2 });
  });

  it('should give nothing without a promise when the load failed or the value is past its time', async () => {
    const failing = new OrgConfigCache<string>(() => Promise.reject(new Error('database down')));
    await expect(failing.get('a')).rejects.toThrow('database down');
    expect(failing.peek('a')).toBeUndefined();

    const expired = new OrgConfigCache(async () => 'value', 0);
    await expired.get('a');
    expect(expired.peek('a')).toBeUndefined();
  });
});
