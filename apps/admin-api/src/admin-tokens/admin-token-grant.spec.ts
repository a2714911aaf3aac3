import type { AdminPrincipal } from '@tollgate/identity';
import { describe, expect, it } from 'vitest';
import { decideAdminTokenGrant, decideTeamAdminHolder } from './admin-token-grant';

const ORG = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const platform: AdminPrincipal = {
  tokenId: 'bootstrap',
  role: 'PLATFORM_ADMIN',
  orgId: null,
  teamId: null,
  userId: null,
};
const orgAdmin: AdminPrincipal = { tokenId: 't1', role: 'ORG_ADMIN', orgId: ORG, teamId: null, userId: null };
const finance: AdminPrincipal = { tokenId: 't2', role: 'FINANCE', orgId: ORG, teamId: null, userId: null };

describe('decideAdminTokenGrant', () => {
  it('should let a platform admin issue a platform token without an org', () => {
    expect(decideAdminTokenGrant(platform, { role: 'PLATFORM_ADMIN' })).toEqual({ allowed: true, orgId: null });
  });

  it('should refuse a platform token that names an org', () => {
    expect(decideAdminTokenGrant(platform, { role: 'PLATFORM_ADMIN', orgId: ORG })).toMatchObject({
      allowed: false,
      status: 400,
      field: 'orgId',
    });
  });

  it('should require an org when a platform admin issues an org-level token', () => {
    expect(decideAdminTokenGrant(platform, { role: 'ORG_ADMIN' })).toMatchObject({
      allowed: false,
      status: 400,
      field: 'orgId',
    });
    expect(decideAdminTokenGrant(platform, { role: 'FINANCE', orgId: OTHER })).toEqual({ allowed: true, orgId: OTHER });
  });

  it('should let an org admin issue tokens of its own org, by default and by id', () => {
    expect(decideAdminTokenGrant(orgAdmin, { role: 'FINANCE' })).toEqual({ allowed: true, orgId: ORG });
    expect(decideAdminTokenGrant(orgAdmin, { role: 'ORG_ADMIN', orgId: ORG })).toEqual({ allowed: true, orgId: ORG });
  });

  it('should refuse an org admin a platform token (403) and another org (404)', () => {
    expect(decideAdminTokenGrant(orgAdmin, { role: 'PLATFORM_ADMIN' })).toMatchObject({ allowed: false, status: 403 });
    expect(decideAdminTokenGrant(orgAdmin, { role: 'MEMBER', orgId: OTHER })).toMatchObject({
      allowed: false,
      status: 404,
    });
  });

  it('should require the user of a MEMBER token and the team of a TEAM_ADMIN token', () => {
    const TEAM = '33333333-3333-4333-8333-333333333333';
    const USER = '44444444-4444-4444-8444-444444444444';
    expect(decideAdminTokenGrant(orgAdmin, { role: 'MEMBER' })).toMatchObject({
      allowed: false,
      status: 400,
      field: 'userId',
    });
    expect(decideAdminTokenGrant(platform, { role: 'MEMBER', orgId: ORG, teamId: TEAM })).toMatchObject({
      allowed: false,
      status: 400,
      field: 'userId',
    });
    expect(decideAdminTokenGrant(orgAdmin, { role: 'TEAM_ADMIN', userId: USER })).toMatchObject({
      allowed: false,
      status: 400,
      field: 'teamId',
    });
    expect(decideAdminTokenGrant(orgAdmin, { role: 'MEMBER', userId: USER })).toEqual({ allowed: true, orgId: ORG });
    expect(decideAdminTokenGrant(orgAdmin, { role: 'TEAM_ADMIN', teamId: TEAM })).toEqual({
      allowed: true,
      orgId: ORG,
    });
  });

  it('should refuse every other role', () => {
    expect(decideAdminTokenGrant(finance, { role: 'MEMBER' })).toMatchObject({ allowed: false, status: 403 });
  });
});

describe('decideTeamAdminHolder', () => {
  const TEAM = '33333333-3333-4333-8333-333333333333';
  const USER = '44444444-4444-4444-8444-444444444444';

  it('should refuse a TEAM_ADMIN token for a member whose membership is not a team admin', () => {
    expect(
      decideTeamAdminHolder({ role: 'TEAM_ADMIN', teamId: TEAM, userId: USER }, { isTeamAdmin: false }),
    ).toMatchObject({
      allowed: false,
      field: 'userId',
      message: expect.stringContaining('not its team admin'),
    });
  });

  it('should refuse a TEAM_ADMIN token for a user outside the team', () => {
    expect(decideTeamAdminHolder({ role: 'TEAM_ADMIN', teamId: TEAM, userId: USER }, null)).toMatchObject({
      allowed: false,
      field: 'userId',
    });
  });

  it('should allow a team admin, a TEAM_ADMIN token naming no person, and other roles', () => {
    expect(decideTeamAdminHolder({ role: 'TEAM_ADMIN', teamId: TEAM, userId: USER }, { isTeamAdmin: true })).toEqual({
      allowed: true,
    });
    expect(decideTeamAdminHolder({ role: 'TEAM_ADMIN', teamId: TEAM }, null)).toEqual({ allowed: true });
    expect(decideTeamAdminHolder({ role: 'MEMBER', teamId: TEAM, userId: USER }, { isTeamAdmin: false })).toEqual({
      allowed: true,
    });
  });
});
