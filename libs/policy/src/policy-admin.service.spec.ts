import { describe, expect, it } from 'vitest';
import { MAX_PATTERNS_PER_LIST, findInvalidPattern } from './policy-admin.service';

describe('findInvalidPattern', () => {
  it('should accept namespace:tool globs and bare namespaces', () => {
    expect(findInvalidPattern('allow', ['github:*', '*:search_*', 'docs', 'everything:echo'])).toBeNull();
  });

  it('should name the first bad entry by its index', () => {
    expect(findInvalidPattern('deny', ['ok:*', 'has space', 'a:b:c'])).toMatchObject({ field: 'deny[1]' });
    expect(findInvalidPattern('allow', [''])).toMatchObject({ field: 'allow[0]' });
  });

  it('should refuse an over-long list as a whole', () => {
    expect(findInvalidPattern('allow', Array(MAX_PATTERNS_PER_LIST + 1).fill('a:*'))).toMatchObject({ field: 'allow' });
  });
});
