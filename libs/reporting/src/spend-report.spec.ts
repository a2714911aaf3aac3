import { describe, expect, it } from 'vitest';
import { dayRange, parseUtcDay, todayAndYesterday } from './report-dates';
import { ReportingException } from './reporting.exception';
import { parseGroupBy, reportColumns } from './spend-report';

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
});
