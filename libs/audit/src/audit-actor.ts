/** The roles an admin token or session acts with. */
export type AdminRole = 'PLATFORM_ADMIN' | 'ORG_ADMIN' | 'TEAM_ADMIN' | 'FINANCE' | 'MEMBER';

/** An admin token as the audit trail names it: the token (id, name, prefix) and who holds it. */
export interface AuditActor {
  tokenId: string;
  tokenName: string;
  tokenPrefix: string | null;
  role: AdminRole;
  /** The person the token names, or null (then `ownerLabel` says who holds it). */
  user: { id: string; name: string | null; email: string } | null;
  ownerLabel: string | null;
}

/** Who made a change, as a row keeps it: `actorId` (a token id, or `system:<process>`) and the actor as it was then. */
export interface AuditBy {
  actorId: string;
  /** Null for a process acting on its own (the worker's repairs). */
  actor: AuditActor | null;
}

/** A process acting on its own, e.g. `system:worker`. */
export function systemActor(actorId: string): AuditBy {
  return { actorId, actor: null };
}
