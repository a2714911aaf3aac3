import type { AdminPrincipal } from '@tollgate/identity';
import { describe, expect, it } from 'vitest';
import { OrgAccessLevel, decideOrgAccess, defaultOrgAccessLevel, orgAccessAskOf } from './org-access';

const ORG = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const askOf = (level: OrgAccessLevel) =>
  level === OrgAccessLevel.Read || level === OrgAccessLevel.Audit ? 'read' : 'change';
const p = (role: AdminPrincipal['role'], orgId: string | null = ORG): AdminPrincipal => ({
  tokenId: 't',
  role,
  orgId,
  teamId: null,
  userId: null,
});

describe('decideOrgAccess', () => {
  it('should let a platform admin do anything in any org', () => {
    for (const level of Object.values(OrgAccessLevel))
      expect(decideOrgAccess(p('PLATFORM_ADMIN', null), OTHER, level, askOf(level)).allowed).toBe(true);
  });

  it('should answer 404 when a principal of another org asks, whatever its role', () => {
    for (const role of ['ORG_ADMIN', 'FINANCE', 'TEAM_ADMIN', 'MEMBER'] as const) {
      for (const level of Object.values(OrgAccessLevel)) {
        expect(decideOrgAccess(p(role), OTHER, level, askOf(level))).toMatchObject({ allowed: false, status: 404 });
      }
    }
  });

  it('should let an org admin manage its own org', () => {
    expect(decideOrgAccess(p('ORG_ADMIN'), ORG, OrgAccessLevel.Manage, 'change').allowed).toBe(true);
  });

  it('should give finance read and audit but 403 on changes', () => {
    expect(decideOrgAccess(p('FINANCE'), ORG, OrgAccessLevel.Read, 'read').allowed).toBe(true);
    expect(decideOrgAccess(p('FINANCE'), ORG, OrgAccessLevel.Audit, 'read').allowed).toBe(true);
    expect(decideOrgAccess(p('FINANCE'), ORG, OrgAccessLevel.Manage, 'change')).toMatchObject({
      allowed: false,
      status: 403,
    });
  });

  it('should let members read their org but not its audit trail', () => {
    expect(decideOrgAccess(p('MEMBER'), ORG, OrgAccessLevel.Read, 'read').allowed).toBe(true);
    expect(decideOrgAccess(p('MEMBER'), ORG, OrgAccessLevel.Audit, 'read')).toMatchObject({
      allowed: false,
      status: 403,
    });
    expect(decideOrgAccess(p('TEAM_ADMIN'), ORG, OrgAccessLevel.Manage, 'change')).toMatchObject({
      allowed: false,
      status: 403,
    });
  });

  it('should let org admins, team admins and members change what is theirs, and refuse finance with 403', () => {
    for (const role of ['ORG_ADMIN', 'TEAM_ADMIN', 'MEMBER'] as const)
      expect(decideOrgAccess(p(role), ORG, OrgAccessLevel.ManageOwn, 'change').allowed).toBe(true);
    expect(decideOrgAccess(p('FINANCE'), ORG, OrgAccessLevel.ManageOwn, 'change')).toMatchObject({
      allowed: false,
      status: 403,
      message: expect.stringMatching(/may not change/),
    });
  });

  it('should refuse members and team admins every org-wide change and the spend and audit reads', () => {
    for (const role of ['TEAM_ADMIN', 'MEMBER'] as const) {
      expect(decideOrgAccess(p(role), ORG, OrgAccessLevel.Manage, 'change')).toMatchObject({
        allowed: false,
        status: 403,
      });
      expect(decideOrgAccess(p(role), ORG, OrgAccessLevel.Audit, 'read')).toMatchObject({
        allowed: false,
        status: 403,
      });
    }
  });

  it('should say the role may not read when a read is refused, and may not change when a write is', () => {
    // GET /connections is for org admins only (level Manage): finance asked to read, not to change.
    expect(decideOrgAccess(p('FINANCE'), ORG, OrgAccessLevel.Manage, 'read')).toMatchObject({
      allowed: false,
      status: 403,
      message: expect.stringMatching(/^role FINANCE may not read this; it needs ORG_ADMIN/),
    });
    expect(decideOrgAccess(p('MEMBER'), ORG, OrgAccessLevel.Audit, 'read')).toMatchObject({
      message: expect.stringMatching(/may not read this/),
    });
    expect(decideOrgAccess(p('FINANCE'), ORG, OrgAccessLevel.Manage, 'change')).toMatchObject({
      message: expect.stringMatching(/may not change this/),
    });
    expect(orgAccessAskOf('HEAD')).toBe('read');
    expect(orgAccessAskOf('DELETE')).toBe('change');
  });

  it('should treat anything but GET and HEAD as a change when a route declares nothing', () => {
    expect(defaultOrgAccessLevel('GET')).toBe(OrgAccessLevel.Read);
    expect(defaultOrgAccessLevel('DELETE')).toBe(OrgAccessLevel.Manage);
  });
});
