import { describe, expect, it } from 'vitest';
import { csvField, spendReportCsv } from './report-csv';
import { ORG_SCOPE, noFilters, reportColumns } from './spend-report';

describe('report CSV', () => {
  it('should quote fields with commas, quotes and line breaks (RFC 4180)', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(null)).toBe('');
  });

  it('should defuse text a spreadsheet would run as a formula but leave numbers alone', () => {
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField(-5n)).toBe('-5');
    expect(csvField(12345678901234567890n)).toBe('12345678901234567890');
  });

  it('should write a header and one line per row with the same columns as the JSON', () => {
    const csv = spendReportCsv({
      orgId: 'o',
      from: '2026-01-01',
      to: '2026-01-01',
      timeZone: 'UTC',
      tag: null,
      filters: noFilters(),
      scope: ORG_SCOPE,
      groupBy: ['team'],
      columns: reportColumns(['team']),
      rows: [
        {
          teamId: 't1',
          teamName: 'Data, Science',
          figures: { calls: 2n, errors: 1n, outputTokens: 10n, costMicros: 500n },
        } as never,
      ],
      totals: { calls: 2n, errors: 1n, outputTokens: 10n, costMicros: 500n },
    });
    expect(csv).toBe('teamId,teamName,calls,errors,outputTokens,costMicros\r\nt1,"Data, Science",2,1,10,500\r\n');
  });
});
