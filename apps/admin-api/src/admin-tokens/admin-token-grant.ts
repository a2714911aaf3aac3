import type { AdminPrincipal } from '@tollgate/identity';

export type AdminRole = AdminPrincipal['role'];

export interface AdminTokenRequest {
  role: AdminRole;
  orgId?: string;
  teamId?: string;
  userId?: string;
}

export type AdminTokenGrant =
  | { allowed: true; orgId: string | null }
  | { allowed: false; status: 400 | 403 | 404; message: string; field?: string };

/**
 * Who may issue which admin token. A platform admin issues any token; an org admin issues tokens
 * of its own org below platform level (another org's id is "not found", as everywhere); nobody
 * else issues tokens. A platform token belongs to no org; every other token to exactly one. A
 * MEMBER token acts for one user and a TEAM_ADMIN token for one team, so they must name it: without
 * it they would reach no key at all.
 */
export function decideAdminTokenGrant(issuer: AdminPrincipal, req: AdminTokenRequest): AdminTokenGrant {
  const grant = decideIssuer(issuer, req);
  if (!grant.allowed) return grant;
  if (req.role === 'MEMBER' && !req.userId)
    return {
      allowed: false,
      status: 400,
      field: 'userId',
      message: 'a MEMBER token acts for one user; userId is required',
    };
  if (req.role === 'TEAM_ADMIN' && !req.teamId)
    return {
      allowed: false,
      status: 400,
      field: 'teamId',
      message: 'a TEAM_ADMIN token acts for one team; teamId is required',
    };
  return grant;
}

function decideIssuer(issuer: AdminPrincipal, req: AdminTokenRequest): AdminTokenGrant {
  if (req.role === 'PLATFORM_ADMIN') {
    if (issuer.role !== 'PLATFORM_ADMIN')
      return { allowed: false, status: 403, message: 'only a platform admin may issue PLATFORM_ADMIN tokens' };
    for (const field of ['orgId', 'teamId', 'userId'] as const) {
      if (req[field])
        return {
          allowed: false,
          status: 400,
          field,
          message: `a PLATFORM_ADMIN token belongs to no organization; omit ${field}`,
        };
    }
    return { allowed: true, orgId: null };
  }
  if (issuer.role === 'PLATFORM_ADMIN') {
    if (!req.orgId)
      return { allowed: false, status: 400, field: 'orgId', message: `orgId is required for a ${req.role} token` };
    return { allowed: true, orgId: req.orgId };
  }
  if (issuer.role !== 'ORG_ADMIN' || !issuer.orgId) {
    return {
      allowed: false,
      status: 403,
      message: `role ${issuer.role} may not issue admin tokens; it needs ORG_ADMIN or PLATFORM_ADMIN`,
    };
  }
  if (req.orgId && req.orgId !== issuer.orgId)
    return { allowed: false, status: 404, field: 'orgId', message: `organization ${req.orgId} not found` };
  return { allowed: true, orgId: issuer.orgId };
}

/**
 * A TEAM_ADMIN token that names a person acts as that person administering the team, so the
 * person must hold the team's admin membership: a plain member (or a stranger to the team) would
 * otherwise get, through a token, the power the membership withholds.
 */
export function decideTeamAdminHolder(
  req: AdminTokenRequest,
  membership: { isTeamAdmin: boolean } | null,
): { allowed: true } | { allowed: false; field: 'userId'; message: string } {
  if (req.role !== 'TEAM_ADMIN' || !req.userId) return { allowed: true };
  if (!membership) {
    return {
      allowed: false,
      field: 'userId',
      message: `user ${req.userId} is not a member of team ${req.teamId}; a TEAM_ADMIN token names one of the team's admins`,
    };
  }
  if (!membership.isTeamAdmin) {
    return {
      allowed: false,
      field: 'userId',
      message: `user ${req.userId} is a member of team ${req.teamId} but not its team admin; make the membership a team admin (isTeamAdmin: true) or issue a MEMBER token`,
    };
  }
  return { allowed: true };
}
