import { SetMetadata } from '@nestjs/common';
import type { AdminPrincipal } from '@tollgate/identity';

/** What a route under /v1/orgs/:orgId does with the organisation. */
export enum OrgAccessLevel {
  /** Read the org's configuration: any role of the org. */
  Read = 'read',
  /** Read spend and the audit trail: org admins and finance. */
  Audit = 'audit',
  /**
   * Change what belongs to the caller: org admins, team admins and members (finance is read-only).
   * The route then checks whose it is: a member's own keys and connections, a team admin's team's keys.
   */
  ManageOwn = 'manage-own',
  /** Change anything in the org: org admins. */
  Manage = 'manage',
}

export const ORG_ACCESS = 'tollgate:orgAccess';

/** Declares what a route needs; routes without it need Read for GET and Manage otherwise. */
export const OrgAccess = (level: OrgAccessLevel): MethodDecorator => SetMetadata(ORG_ACCESS, level);

const ROLES_BY_LEVEL: Record<OrgAccessLevel, readonly AdminPrincipal['role'][]> = {
  [OrgAccessLevel.Read]: ['ORG_ADMIN', 'FINANCE', 'TEAM_ADMIN', 'MEMBER'],
  [OrgAccessLevel.Audit]: ['ORG_ADMIN', 'FINANCE'],
  [OrgAccessLevel.ManageOwn]: ['ORG_ADMIN', 'TEAM_ADMIN', 'MEMBER'],
  [OrgAccessLevel.Manage]: ['ORG_ADMIN'],
};

/** What a request asks: a read (GET, HEAD) or a change (anything else). */
export type OrgAccessAsk = 'read' | 'change';

export function orgAccessAskOf(method: string): OrgAccessAsk {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'change';
}

export type OrgAccessDecision = { allowed: true } | { allowed: false; status: 404 | 403; message: string };

/**
 * Whether a principal may act on an organisation. Another org's principal is told the org does
 * not exist (404, as for an unknown id) so ids cannot be probed; inside its own org a role that
 * is too weak gets 403 with what it would need, worded by what was asked: a refused read says the
 * role may not read it (a GET of an org-admin-only list), a refused write that it may not change it.
 */
export function decideOrgAccess(
  principal: AdminPrincipal,
  orgId: string,
  level: OrgAccessLevel,
  asked: OrgAccessAsk,
): OrgAccessDecision {
  if (principal.role === 'PLATFORM_ADMIN') return { allowed: true };
  if (!principal.orgId || principal.orgId !== orgId) {
    return { allowed: false, status: 404, message: `organization ${orgId} not found` };
  }
  if (!ROLES_BY_LEVEL[level].includes(principal.role)) {
    const needed = [...ROLES_BY_LEVEL[level], 'PLATFORM_ADMIN'].join(' or ');
    return { allowed: false, status: 403, message: `role ${principal.role} may not ${asked} this; it needs ${needed}` };
  }
  return { allowed: true };
}

/** GET and HEAD read; everything else changes something. */
export function defaultOrgAccessLevel(method: string): OrgAccessLevel {
  return orgAccessAskOf(method) === 'read' ? OrgAccessLevel.Read : OrgAccessLevel.Manage;
}
