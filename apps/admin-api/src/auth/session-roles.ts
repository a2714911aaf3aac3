import type { AdminPrincipal } from '@tollgate/identity';

export type SessionRole = Exclude<AdminPrincipal['role'], 'PLATFORM_ADMIN'>;

/** What a person holds in their organisation: an org-wide role, if granted, and their memberships. */
export interface PersonStanding {
  orgRole: 'ORG_ADMIN' | 'FINANCE' | null;
  /** Oldest first. */
  memberships: { teamId: string; isTeamAdmin: boolean }[];
}

/** Every role the person holds (strongest first) and the one a session acts with. */
export interface SessionRoles {
  roles: SessionRole[];
  acting: { role: SessionRole; teamId: string | null } | null;
}

/**
 * Roles from memberships: an org-wide role (org admin, finance) as granted, team admin for a team
 * they administer, member for any team. A principal has one role, so a session acts with the
 * strongest: org admin > finance > team admin (of their oldest such team) > member.
 */
export function sessionRolesOf(person: PersonStanding): SessionRoles {
  const roles: SessionRole[] = [];
  if (person.orgRole) roles.push(person.orgRole);
  const adminOf = person.memberships.find((m) => m.isTeamAdmin);
  if (adminOf) roles.push('TEAM_ADMIN');
  if (person.memberships.length > 0) roles.push('MEMBER');
  if (roles.length === 0) return { roles, acting: null };
  const role = roles[0];
  const teamId = role === 'TEAM_ADMIN' ? adminOf!.teamId : role === 'MEMBER' ? person.memberships[0].teamId : null;
  return { roles, acting: { role, teamId } };
}
