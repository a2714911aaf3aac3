import type { AdminPrincipal } from '@tollgate/identity';
import { describe, expect, it } from 'vitest';
import { isKeyMetadata, isKeyTagList } from './key-labels.validator';
import { decideKeyBudget, decideKeyRateLimit } from './key-limits';

const as = (role: AdminPrincipal['role']): AdminPrincipal => ({
  tokenId: 't',
  role,
  orgId: 'o',
  teamId: 'team',
  userId: null,
});

describe('decideKeyBudget', () => {
  const team = [{ period: 'MONTH', limitMicros: 10_000_000n }];

  it('should refuse a team admin a key budget above the team’s of the same period, naming limitMicros', () => {
    expect(decideKeyBudget(as('TEAM_ADMIN'), { period: 'MONTH', limitMicros: 10_000_001n }, team)).toMatchObject({
      allowed: false,
      status: 403,
      field: 'limitMicros',
    });
    expect(decideKeyBudget(as('TEAM_ADMIN'), { period: 'MONTH', limitMicros: 10_000_000n }, team)).toEqual({
      allowed: true,
    });
    expect(decideKeyBudget(as('TEAM_ADMIN'), { period: 'DAY', limitMicros: 50_000_000n }, team)).toEqual({
      allowed: true,
    });
  });

  it('should let org admins set any key budget and refuse members and finance', () => {
    expect(decideKeyBudget(as('ORG_ADMIN'), { period: 'MONTH', limitMicros: 99_000_000n }, team)).toEqual({
      allowed: true,
    });
    for (const role of ['MEMBER', 'FINANCE'] as const)
      expect(decideKeyBudget(as(role), { period: 'MONTH', limitMicros: 1n }, team)).toMatchObject({
        allowed: false,
        status: 403,
      });
  });
});

describe('decideKeyRateLimit', () => {
  const team = [{ toolPattern: '*:*', windowSeconds: 60, callsPerWindow: 10, maxConcurrent: 4 }];
  const req = (callsPerWindow: number | null, maxConcurrent: number | null, windowSeconds = 60) => ({
    toolPattern: '*:*',
    windowSeconds,
    callsPerWindow,
    maxConcurrent,
  });

  it('should refuse a team admin more calls per the same window or more concurrency than the team’s', () => {
    expect(decideKeyRateLimit(as('TEAM_ADMIN'), req(11, null), team)).toMatchObject({
      allowed: false,
      field: 'callsPerWindow',
    });
    expect(decideKeyRateLimit(as('TEAM_ADMIN'), req(null, 5), team)).toMatchObject({
      allowed: false,
      field: 'maxConcurrent',
    });
    expect(decideKeyRateLimit(as('TEAM_ADMIN'), req(10, 4), team)).toEqual({ allowed: true });
    expect(decideKeyRateLimit(as('TEAM_ADMIN'), req(100, null, 3600), team)).toEqual({ allowed: true });
  });
});

describe('key tags and metadata', () => {
  it('should accept short distinct tags and small JSON objects only', () => {
    expect(isKeyTagList(['project:atlas', 'env/prod', 'a.b_c-d'])).toBe(true);
    for (const bad of [
      ['has space'],
      ['-lead'],
      ['x'.repeat(41)],
      ['a', 'a'],
      Array.from({ length: 21 }, (_, i) => `t${i}`),
      'tag',
      [1],
    ])
      expect(isKeyTagList(bad)).toBe(false);
    expect(isKeyMetadata({ costCentre: 'CC-42', owner: { team: 'x' } })).toBe(true);
    for (const bad of [[1], null, 'x', { big: 'x'.repeat(5000) }, { a: { b: { c: { d: { e: 1 } } } } }])
      expect(isKeyMetadata(bad)).toBe(false);
  });
});
