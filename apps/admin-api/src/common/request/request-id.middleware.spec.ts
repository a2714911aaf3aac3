import { describe, expect, it } from 'vitest';
import { requestIdFrom } from './request-id.middleware';

describe('requestIdFrom', () => {
  it('should keep a sane incoming id', () => {
    expect(requestIdFrom('abc-123.DEF:9_x')).toBe('abc-123.DEF:9_x');
  });

  it('should make a new id when the incoming one is missing or unsafe for logs', () => {
    expect(requestIdFrom(undefined)).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIdFrom('bad id\nwith newline')).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIdFrom('x'.repeat(200))).toMatch(/^[0-9a-f-]{36}$/);
  });
});
