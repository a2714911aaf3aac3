import { describe, expect, it } from 'vitest';
import { lineDiff, prettyJson } from './line-diff';
import { zonedToUtc } from './zoned-time';

describe('lineDiff', () => {
  it('should pair a changed line side by side and keep the rest', () => {
    const rows = lineDiff(prettyJson({ b: 1, a: 'x' }), prettyJson({ a: 'y', b: 1, c: true }));
    expect(rows.filter((r) => r.kind === 'changed')).toEqual([
      { kind: 'changed', left: '  "a": "x",', right: '  "a": "y",' },
      { kind: 'changed', left: '  "b": 1', right: '  "b": 1,' },
    ]);
    expect(rows.filter((r) => r.kind === 'added').map((r) => r.right)).toEqual(['  "c": true']);
    expect(rows[0]).toEqual({ kind: 'same', left: '{', right: '{' });
  });

  it('should show everything as added when there was nothing pinned', () => {
    expect(lineDiff('', 'a\nb').map((r) => r.kind)).toEqual(['added', 'added']);
  });
});

describe('zonedToUtc', () => {
  it('should read a wall-clock time in the org zone, across DST', () => {
    expect(zonedToUtc('2026-12-01', '09:30', 'Europe/Paris').toISOString()).toBe('2026-12-01T08:30:00.000Z');
    expect(zonedToUtc('2026-07-01', '00:00', 'America/New_York').toISOString()).toBe('2026-07-01T04:00:00.000Z');
    expect(zonedToUtc('2026-07-01', '00:00', 'UTC').toISOString()).toBe('2026-07-01T00:00:00.000Z');
  });
});
