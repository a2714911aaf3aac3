import type { AdminPrincipal } from '@tollgate/identity';

/**
 * Which of an org's virtual keys a principal reaches, for reading and, where its role may change
 * keys at all, for changing them. The org itself was checked by the OrgScopeGuard.
 */
export type KeyReach =
  /** Every key of the org: platform and org admins (read and change), finance (read only). */
  | { kind: 'org' }
  /** The keys of one team: a TEAM_ADMIN token's team. */
  | { kind: 'team'; teamId: string }
  /** The keys of one user: a MEMBER token's user. */
  | { kind: 'user'; userId: string }
  /** No key: a team admin token without a team, a member token without a user. */
  | { kind: 'none' };

export function keyReachOf(admin: AdminPrincipal): KeyReach {
  switch (admin.role) {
    case 'PLATFORM_ADMIN':
    case 'ORG_ADMIN':
    case 'FINANCE':
      return { kind: 'org' };
    case 'TEAM_ADMIN':
      return admin.teamId ? { kind: 'team', teamId: admin.teamId } : { kind: 'none' };
    case 'MEMBER':
      return admin.userId ? { kind: 'user', userId: admin.userId } : { kind: 'none' };
  }
}

/** The filter that lists exactly the keys within reach; null when that is none at all. */
export function keyListFilter(reach: KeyReach): { teamId?: string; userId?: string } | null {
  switch (reach.kind) {
    case 'org':
      return {};
    case 'team':
      return { teamId: reach.teamId };
    case 'user':
      return { userId: reach.userId };
    case 'none':
      return null;
  }
}

/** Whether a key of the principal's org is within its reach (the keys its list shows); outside it, the key does not exist for it (404). */
export function reachesKey(reach: KeyReach, key: { teamId: string; userId: string }): boolean {
  const filter = keyListFilter(reach);
  return (
    filter !== null &&
    (filter.teamId === undefined || filter.teamId === key.teamId) &&
    (filter.userId === undefined || filter.userId === key.userId)
  );
}

export type KeyCreationDecision = { allowed: true } | { allowed: false; message: string };

/**
 * Who may create a key for which team and user. Org and platform admins any; a team admin in its
 * team (for any member of it); a member for itself (in a team it belongs to, which the identity
 * service checks as for everyone); finance never. Refusals are 403: the caller named the team and
 * user itself, so there is nothing to hide.
 */
export function decideKeyCreation(admin: AdminPrincipal, req: { teamId: string; userId: string }): KeyCreationDecision {
  // Finance reads every key but changes none.
  if (admin.role === 'FINANCE') {
    return {
      allowed: false,
      message:
        'role FINANCE is read-only; creating a key needs ORG_ADMIN, TEAM_ADMIN of the team or MEMBER for its own user',
    };
  }
  // Everyone else creates exactly the keys it would reach.
  if (reachesKey(keyReachOf(admin), req)) return { allowed: true };
  return admin.role === 'TEAM_ADMIN'
    ? {
        allowed: false,
        message: `role TEAM_ADMIN may only create keys in its own team; team ${req.teamId} needs ORG_ADMIN or its TEAM_ADMIN`,
      }
    : {
        allowed: false,
        message: `role MEMBER may only create keys for its own user; user ${req.userId} needs ORG_ADMIN or the team's TEAM_ADMIN`,
      };
}
