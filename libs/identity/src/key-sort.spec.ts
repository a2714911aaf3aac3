import { describe, expect, it } from 'vitest';
import { keyOrderBy, parseKeySort } from './key-sort';

describe('key sort', () => {
  it('should order by a relation or a nullable time with empty times last when asked', () => {
    expect(keyOrderBy(parseKeySort('team:desc'))).toEqual([{ team: { name: 'desc' } }]);
    expect(keyOrderBy(parseKeySort('lastUsedAt:asc'))).toEqual([{ lastUsedAt: { sort: 'asc', nulls: 'last' } }]);
    expect(keyOrderBy(undefined)).toEqual([]);
  });

  it('should refuse a column it does not know when parsing', () => {
    expect(() => parseKeySort('secret:asc')).toThrow(RangeError);
    expect(() => parseKeySort('name:up')).toThrow(RangeError);
  });
});
