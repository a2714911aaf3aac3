import { describe, expect, it } from 'vitest';
import { decodeAuditCursor, encodeAuditCursor } from './audit-cursor';

describe('audit cursor', () => {
  it('should give back the position it was made from', () => {
    const at = { createdAt: new Date('2026-03-10T23:30:00.123Z'), id: '0b8f6a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b' };
    expect(decodeAuditCursor(encodeAuditCursor(at))).toEqual(at);
  });

  it('should take the first and the last millisecond Postgres can hold', () => {
    const id = '0b8f6a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
    for (const createdAt of [new Date(0), new Date('9999-12-31T23:59:59.999Z')]) {
      expect(decodeAuditCursor(encodeAuditCursor({ createdAt, id }))).toEqual({ createdAt, id });
    }
  });

  it.each([
    ['not base64url', 'a+b/c='],
    ['empty text', ''],
    ['another shape', Buffer.from('a1|12|not-a-uuid').toString('base64url')],
    ['another version', Buffer.from('v9|12|0b8f6a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b').toString('base64url')],
    [
      'a time past year 9999',
      Buffer.from('a1|253402300800000|0b8f6a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b').toString('base64url'),
    ],
    ['the longest time', Buffer.from('a1|999999999999999|0b8f6a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b').toString('base64url')],
    ['extra parts', Buffer.from('a1|12|0b8f6a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b|x').toString('base64url')],
  ])('should refuse %s naming the cursor field', (_what, cursor) => {
    expect(() => decodeAuditCursor(cursor)).toThrow(expect.objectContaining({ field: 'cursor' }));
  });
});
