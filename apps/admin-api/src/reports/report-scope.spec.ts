import type { AdminPrincipal } from '@tollgate/identity';
import { describe, expect, it } from 'vitest';
import { reportScopeOf } from './report-scope';

const principal = (p: Partial<AdminPrincipal>): AdminPrincipal => ({
  tokenId: 't',
  role: 'ORG_ADMIN',
  orgId: 'o',
  teamId: null,
  userId: null,
  ...p,
});

describe('report scope of a principal', () => {
  it('should give org admins, finance and platform admins the whole org', () => {
    for (const role of ['ORG_ADMIN', 'FINANCE', 'PLATFORM_ADMIN'] as const)
      expect(reportScopeOf(principal({ role, teamId: 'x', userId: 'y' }))).toEqual({ kind: 'org', id: null });
  });

  it('should give a team admin its team and a member their user', () => {
    expect(reportScopeOf(principal({ role: 'TEAM_ADMIN', teamId: 'team-1', userId: 'u' }))).toEqual({
      kind: 'team',
      id: 'team-1',
    });
    expect(reportScopeOf(principal({ role: 'MEMBER', teamId: 'team-1', userId: 'u' }))).toEqual({
      kind: 'user',
      id: 'u',
    });
  });

  it('should refuse with 403 a team admin without a team and a member without a user', () => {
    expect(() => reportScopeOf(principal({ role: 'TEAM_ADMIN', userId: 'u' }))).toThrow(
      expect.objectContaining({ status: 403 }),
    );
    expect(() => reportScopeOf(principal({ role: 'MEMBER', teamId: 't' }))).toThrow(
      expect.objectContaining({ status: 403 }),
    );
  });
});
