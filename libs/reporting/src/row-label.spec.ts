import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rowLabel } from './row-label';

describe('rowLabel', () => {
  it('should name a row by its names, and by its ids when a name is missing', () => {
    const row = {
      teamName: 'platform',
      teamId: 't1',
      userEmail: null,
      userId: 'u1',
      keyName: 'ci',
      keyPrefix: 'tg_ab',
    };
    expect(rowLabel(row, 'team')).toBe('platform');
    expect(rowLabel(row, 'user')).toBe('u1');
    expect(rowLabel(row, 'key')).toBe('ci (tg_ab)');
    expect(rowLabel({ keyName: null, keyId: 'k1' }, 'key')).toBe('k1');
    expect(rowLabel({ upstreamNamespace: 'github', toolName: 'search' }, 'tool')).toBe('github / search');
    expect(rowLabel({ upstreamId: 'up1', toolName: '' }, 'tool')).toBe('up1 / (none)');
    expect(rowLabel({ day: '2026-11-27' }, 'day')).toBe('2026-11-27');
    expect(rowLabel({ tag: null }, 'tag')).toBe('(untagged)');
    expect(rowLabel({ tag: 'env:prod' }, 'tag')).toBe('env:prod');
  });

  it('should import nothing, so the console can bundle it for the browser', () => {
    const source = readFileSync(path.join(__dirname, 'row-label.ts'), 'utf8');
    expect(source).not.toMatch(/^\s*(import|export .* from)\b/m);
    expect(source).not.toMatch(/\brequire\(/);
  });
});
