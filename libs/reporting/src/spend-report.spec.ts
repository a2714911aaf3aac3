import { describe, expect, it } from 'vitest';
import { dayRange, parseUtcDay, todayAndYesterday } from './report-dates';
import { ReportingException } from './reporting.exception';
import { noFilters, parseFilterList, parseGroupBy, reportColumns, scopeFilters } from './spend-report';

describe('spend report query', () => {
  it('should parse a comma-separated groupBy, dropping repeats and keeping order', () => {
    expect(parseGroupBy('team, day,team')).toEqual(['team', 'day']);
    expect(parseGroupBy(undefined)).toEqual([]);
  });

  it('should reject an unknown dimension naming the groupBy field', () => {
    expect(() => parseGroupBy('team,planet')).toThrow(expect.objectContaining({ field: 'groupBy' }));
  });

  it('should list each column once when tool and upstream are both asked for', () => {
    expect(reportColumns(['upstream', 'tool'])).toEqual([
      'upstreamId',
      'upstreamNamespace',
      'toolName',
      'calls',
      'errors',
      'outputTokens',
      'costMicros',
    ]);
  });

  it('should take both ends of a date range inclusively as UTC days', () => {
    const r = dayRange('2026-02-27', '2026-03-01');
    expect(r.start.toISOString()).toBe('2026-02-27T00:00:00.000Z');
    expect(r.end.toISOString()).toBe('2026-03-02T00:00:00.000Z');
  });

  it('should reject impossible dates, reversed ranges and overlong ranges naming the field', () => {
    expect(parseUtcDay('2026-02-30')).toBeNull();
    expect(() => dayRange('2026-13-01', '2026-12-01')).toThrow(expect.objectContaining({ field: 'from' }));
    expect(() => dayRange('2026-02-02', '2026-02-01')).toThrow(expect.objectContaining({ field: 'to' }));
    expect(() => dayRange('2020-01-01', '2026-01-01')).toThrow(ReportingException);
  });

  it('should name yesterday and today in UTC', () => {
    expect(todayAndYesterday(new Date('2026-03-01T00:30:00Z'))).toEqual(['2026-02-28', '2026-03-01']);
  });

  it('should parse a filter list, lower-casing ids and dropping repeats', () => {
    const id = '5F0C8A4E-0A51-4D6C-9A0E-3C2B1D7E9F10';
    expect(parseFilterList(`${id}, ${id.toLowerCase()}`, 'teamId')).toEqual([id.toLowerCase()]);
    expect(parseFilterList('search, fetch,search', 'tool')).toEqual(['search', 'fetch']);
    expect(parseFilterList('', 'keyId')).toEqual([]);
    expect(parseFilterList(undefined, 'tool')).toEqual([]);
  });

  it('should reject a malformed value, an empty item or more than 100 values naming the field', () => {
    expect(() => parseFilterList('abc', 'userId')).toThrow(expect.objectContaining({ field: 'userId' }));
    expect(() => parseFilterList('a,,b', 'tool')).toThrow(expect.objectContaining({ field: 'tool' }));
    expect(() => parseFilterList('x'.repeat(201), 'tool')).toThrow(expect.objectContaining({ field: 'tool' }));
    expect(() => parseFilterList('bad\u0000name', 'tool')).toThrow(expect.objectContaining({ field: 'tool' }));
    const many = Array.from({ length: 101 }, (_, i) => `t${i}`).join(',');
    expect(() => parseFilterList(many, 'tool')).toThrow(expect.objectContaining({ field: 'tool' }));
  });

  it('should force the scope’s team or user and refuse another one naming the field', () => {
    const f = { ...noFilters(), tool: ['search'] };
    expect(scopeFilters({ kind: 'org', id: null }, f)).toEqual(f);
    expect(scopeFilters({ kind: 'team', id: 't1' }, f)).toEqual({ ...f, teamId: ['t1'] });
    expect(scopeFilters({ kind: 'user', id: 'u1' }, { ...f, userId: ['u1'] })).toEqual({ ...f, userId: ['u1'] });
    expect(() => scopeFilters({ kind: 'team', id: 't1' }, { ...f, teamId: ['t1', 't2'] })).toThrow(
      expect.objectContaining({ field: 'teamId', code: 'REPORT_OUT_OF_SCOPE' }),
    );
    expect(() => scopeFilters({ kind: 'user', id: 'u1' }, { ...f, userId: ['u2'] })).toThrow(
      expect.objectContaining({ field: 'userId' }),
    );
  });
});
