import type { AdminPrincipal } from '@tollgate/identity';
import { describe, expect, it } from 'vitest';
import { decideKeyCreation, keyListFilter, keyReachOf, reachesKey } from './key-access';

const ORG = '11111111-1111-4111-8111-111111111111';
const TEAM = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const OTHER_TEAM = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
const ALICE = 'cccccccc-cccc-4ccc-8ccc-cccccccccccc';
const BOB = 'dddddddd-dddd-4ddd-8ddd-dddddddddddd';

const p = (role: AdminPrincipal['role'], ids: { teamId?: string; userId?: string } = {}): AdminPrincipal => ({
  tokenId: 't',
  role,
  orgId: role === 'PLATFORM_ADMIN' ? null : ORG,
  teamId: ids.teamId ?? null,
  userId: ids.userId ?? null,
});

const alicesKey = { teamId: TEAM, userId: ALICE };
const bobsKey = { teamId: TEAM, userId: BOB };
const bobsOtherTeamKey = { teamId: OTHER_TEAM, userId: BOB };

describe('keyReachOf and reachesKey', () => {
  it('should let platform admins, org admins and finance reach every key of the org', () => {
    for (const role of ['PLATFORM_ADMIN', 'ORG_ADMIN', 'FINANCE'] as const) {
      const reach = keyReachOf(p(role));
      expect(reach).toEqual({ kind: 'org' });
      for (const key of [alicesKey, bobsKey, bobsOtherTeamKey]) expect(reachesKey(reach, key)).toBe(true);
    }
  });

  it('should let a member reach only its own user’s keys, in any team', () => {
    const reach = keyReachOf(p('MEMBER', { userId: BOB, teamId: TEAM }));
    expect(reach).toEqual({ kind: 'user', userId: BOB });
    expect(reachesKey(reach, bobsKey)).toBe(true);
    expect(reachesKey(reach, bobsOtherTeamKey)).toBe(true);
    expect(reachesKey(reach, alicesKey)).toBe(false);
  });

  it('should let a team admin reach only its team’s keys, whoever owns them', () => {
    const reach = keyReachOf(p('TEAM_ADMIN', { teamId: TEAM, userId: BOB }));
    expect(reach).toEqual({ kind: 'team', teamId: TEAM });
    expect(reachesKey(reach, alicesKey)).toBe(true);
    expect(reachesKey(reach, bobsKey)).toBe(true);
    expect(reachesKey(reach, bobsOtherTeamKey)).toBe(false);
  });

  it('should reach no key when a member token names no user or a team admin token no team', () => {
    for (const admin of [p('MEMBER', { teamId: TEAM }), p('TEAM_ADMIN', { userId: ALICE })]) {
      const reach = keyReachOf(admin);
      expect(reach).toEqual({ kind: 'none' });
      expect(reachesKey(reach, alicesKey)).toBe(false);
    }
  });
});

describe('keyListFilter', () => {
  it('should filter the listing to exactly the keys within reach', () => {
    expect(keyListFilter({ kind: 'org' })).toEqual({});
    expect(keyListFilter({ kind: 'team', teamId: TEAM })).toEqual({ teamId: TEAM });
    expect(keyListFilter({ kind: 'user', userId: ALICE })).toEqual({ userId: ALICE });
    expect(keyListFilter({ kind: 'none' })).toBeNull();
  });
});

describe('decideKeyCreation', () => {
  it('should let org and platform admins create a key for anyone', () => {
    expect(decideKeyCreation(p('ORG_ADMIN'), bobsOtherTeamKey)).toEqual({ allowed: true });
    expect(decideKeyCreation(p('PLATFORM_ADMIN'), alicesKey)).toEqual({ allowed: true });
  });

  it('should let a member create a key for itself and refuse one for another user', () => {
    const member = p('MEMBER', { userId: BOB });
    expect(decideKeyCreation(member, bobsKey)).toEqual({ allowed: true });
    expect(decideKeyCreation(member, bobsOtherTeamKey)).toEqual({ allowed: true });
    expect(decideKeyCreation(member, alicesKey)).toMatchObject({
      allowed: false,
      message: expect.stringMatching(/own user/),
    });
    expect(decideKeyCreation(p('MEMBER'), alicesKey).allowed).toBe(false);
  });

  it('should let a team admin create keys in its team only', () => {
    const teamAdmin = p('TEAM_ADMIN', { teamId: TEAM });
    expect(decideKeyCreation(teamAdmin, alicesKey)).toEqual({ allowed: true });
    expect(decideKeyCreation(teamAdmin, bobsOtherTeamKey)).toMatchObject({
      allowed: false,
      message: expect.stringMatching(/own team/),
    });
    expect(decideKeyCreation(p('TEAM_ADMIN'), alicesKey).allowed).toBe(false);
  });

  it('should never let finance create a key, not even for its own user', () => {
    expect(decideKeyCreation(p('FINANCE', { userId: ALICE, teamId: TEAM }), alicesKey)).toMatchObject({
      allowed: false,
      message: expect.stringMatching(/read-only/),
    });
  });
});
