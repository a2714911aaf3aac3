import { describe, expect, it } from 'vitest';
import { REDACTED, redactUrl, scrubAuditDetails } from './audit-details';

describe('scrubAuditDetails', () => {
  it('should drop secret-named keys at any depth', () => {
    expect(scrubAuditDetails({ name: 'k', secret: 's', nested: { secretHash: 'h', password: 'p', ok: 1 } })).toEqual({
      name: 'k',
      nested: { ok: 1 },
    });
  });

  it('should keep only header names', () => {
    expect(scrubAuditDetails({ headers: { Authorization: 'Bearer abc', 'X-B': '1' } })).toEqual({
      headerNames: ['Authorization', 'X-B'],
    });
  });

  it('should mask an issued secret found inside a string', () => {
    const key = `tg_${'a'.repeat(40)}`;
    const token = `tga_${'B'.repeat(40)}`;
    expect(scrubAuditDetails({ note: `leaked ${key} and ${token}` })).toEqual({
      note: `leaked ${REDACTED} and ${REDACTED}`,
    });
  });

  it('should turn bigints and dates into JSON values', () => {
    expect(scrubAuditDetails({ limit: 5_000_000n, huge: 2n ** 60n, at: new Date('2030-01-01T00:00:00Z') })).toEqual({
      limit: 5_000_000,
      huge: '1152921504606846976',
      at: '2030-01-01T00:00:00.000Z',
    });
  });
});

describe('redactUrl', () => {
  it('should mask a password in a URL and leave other URLs alone', () => {
    expect(redactUrl('https://bob:hunter2@mcp.example.com/mcp')).toBe('https://bob:***@mcp.example.com/mcp');
    expect(redactUrl('http://127.0.0.1:3000/mcp')).toBe('http://127.0.0.1:3000/mcp');
    expect(redactUrl(null)).toBeNull();
  });
});
