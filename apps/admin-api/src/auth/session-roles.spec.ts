import { describe, expect, it } from 'vitest';
import { sessionRolesOf } from './session-roles';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';

describe('sessionRolesOf', () => {
  it('should act with the org-wide role when one is granted', () => {
    expect(sessionRolesOf({ orgRole: 'FINANCE', memberships: [{ teamId: A, isTeamAdmin: true }] })).toEqual({
      roles: ['FINANCE', 'TEAM_ADMIN', 'MEMBER'],
      acting: { role: 'FINANCE', teamId: null },
    });
    expect(sessionRolesOf({ orgRole: 'ORG_ADMIN', memberships: [] })).toEqual({
      roles: ['ORG_ADMIN'],
      acting: { role: 'ORG_ADMIN', teamId: null },
    });
  });

  it('should act as team admin of the first team administered when there is no org role', () => {
    expect(
      sessionRolesOf({
        orgRole: null,
        memberships: [
          { teamId: A, isTeamAdmin: false },
          { teamId: B, isTeamAdmin: true },
        ],
      }).acting,
    ).toEqual({ role: 'TEAM_ADMIN', teamId: B });
  });

  it('should act as member of the oldest team, and give no role without memberships or org role', () => {
    expect(sessionRolesOf({ orgRole: null, memberships: [{ teamId: A, isTeamAdmin: false }] })).toEqual({
      roles: ['MEMBER'],
      acting: { role: 'MEMBER', teamId: A },
    });
    expect(sessionRolesOf({ orgRole: null, memberships: [] })).toEqual({ roles: [], acting: null });
  });
});
