import { describe, expect, it } from 'vitest';
import type { SpendReport } from '../api/admin-types';
import { filterReport } from './report-filter';

const row = (teamId: string, toolName: string, day: string, costMicros: string, calls = 1) => ({
  teamId,
  teamName: teamId,
  upstreamId: 'u1',
  upstreamNamespace: 'ns',
  toolName,
  day,
  calls,
  errors: 0,
  outputTokens: 2,
  costMicros,
});
const report: SpendReport = {
  from: '2026-11-01',
  to: '2026-11-30',
  timeZone: 'UTC',
  groupBy: ['team', 'tool', 'day'],
  columns: [
    'teamId',
    'teamName',
    'upstreamId',
    'upstreamNamespace',
    'toolName',
    'day',
    'calls',
    'errors',
    'outputTokens',
    'costMicros',
  ],
  rows: [
    row('a', 'echo', '2026-11-01', '9007199254740993'),
    row('a', 'add', '2026-11-01', '7'),
    row('b', 'echo', '2026-11-01', '5'),
    row('a', 'echo', '2026-11-02', '1', 3),
  ],
  totals: { calls: 6, errors: 0, outputTokens: 8, costMicros: '9007199254741006' },
};

describe('filterReport', () => {
  it('keeps the matching rows and folds them onto the dimensions shown, summing exactly', () => {
    const r = filterReport(report, ['day'], { tool: 'echo', team: 'a' });
    expect(r.rows).toEqual([
      { day: '2026-11-01', calls: 1, errors: 0, outputTokens: 2, costMicros: '9007199254740993' },
      { day: '2026-11-02', calls: 3, errors: 0, outputTokens: 2, costMicros: '1' },
    ]);
    expect(r.totals).toEqual({ calls: 4, errors: 0, outputTokens: 4, costMicros: '9007199254740994' });
    expect(r.columns).toEqual(['day', 'calls', 'errors', 'outputTokens', 'costMicros']);
  });

  it('is the report itself without filters', () => {
    expect(filterReport(report, ['team', 'tool', 'day'], {})).toBe(report);
  });
});
