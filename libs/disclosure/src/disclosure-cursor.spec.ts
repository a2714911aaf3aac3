import { describe, expect, it } from 'vitest';
import { decodeNameCursor, decodeSearchCursor, encodeNameCursor, encodeSearchCursor } from './disclosure-cursor';
import { DisclosureException } from './disclosure.exception';

describe('disclosure cursors', () => {
  it('should give back the search key and statistics when a cursor is decoded', () => {
    const cursor = {
      check: 'ab12cd',
      after: { name: 'a~b__c', score: 1234567 },
      stats: { docCount: 527, avgLengths: [2.1, 1, 0, 12.4, 8, 3], docFrequencies: [3, 0, 12] },
    };
    expect(decodeSearchCursor(encodeSearchCursor(cursor))).toEqual(cursor);
  });

  it('should give back the name when a name cursor is decoded', () => {
    expect(decodeNameCursor(encodeNameCursor('github__get_me'))).toBe('github__get_me');
  });

  it('should reject a cursor when it was not issued by this server', () => {
    expect(() => decodeSearchCursor('garbage')).toThrow(DisclosureException);
    expect(() => decodeSearchCursor('s1~x~1.5~1~1~1~name')).toThrow(DisclosureException);
    expect(() => decodeNameCursor('s1~x')).toThrow(DisclosureException);
  });
});
