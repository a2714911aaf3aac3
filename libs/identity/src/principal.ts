import type { AdminRole, AuditActor, AuditBy } from '@tollgate/audit';

/** Who is calling the edge: resolved from a virtual key. */
export interface Principal {
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
  keyPrefix: string;
  orgTimeZone: string;
  disclosureMode: 'FULL' | 'PROGRESSIVE' | 'CODE' | 'AUTO' | null;
  /** What the organisation keeps of its agents' trails; absent: the default (METADATA). */
  trailMode?: 'OFF' | 'METADATA' | 'FULL';
}

/** Who is calling the admin API. */
export interface AdminPrincipal {
  tokenId: string;
  role: AdminRole;
  orgId: string | null;
  teamId: string | null;
  userId: string | null;
  /** The token and the person behind it, as the audit trail shows them (set when authenticated). */
  actor?: AdminActor;
}

/** An admin token as the audit trail names it: the token (id, name, prefix) and who holds it. */
export type AdminActor = AuditActor;

/** Who acted, as the audit trail keeps it: the token and the person it names (a principal without one: its id and role). */
export function auditBy(p: AdminPrincipal): AuditBy {
  return {
    actorId: p.tokenId,
    actor: p.actor ?? {
      tokenId: p.tokenId,
      tokenName: p.tokenId,
      tokenPrefix: null,
      role: p.role,
      user: null,
      ownerLabel: null,
    },
  };
}

/**
 * A person acting for themselves, with no admin token: an MCP client's OAuth consent, the callback
 * of their own upstream connection, their first single sign-on. `via` names the flow in `actorId`.
 */
export function selfActor(
  via: 'oauth-consent' | 'oauth-callback' | 'sso-sign-in',
  who: { orgId: string; teamId: string | null; userId: string },
): AuditBy {
  return auditBy({
    tokenId: `${via}:user:${who.userId}`,
    role: 'MEMBER',
    orgId: who.orgId,
    teamId: who.teamId,
    userId: who.userId,
  });
}
