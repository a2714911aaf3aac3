/** Who is calling the edge: resolved from a virtual key. */
export interface Principal {
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
  keyPrefix: string;
  orgTimeZone: string;
  disclosureMode: 'FULL' | 'PROGRESSIVE' | 'CODE' | 'AUTO' | null;
}

/** Who is calling the admin API. */
export interface AdminPrincipal {
  tokenId: string;
  role: 'PLATFORM_ADMIN' | 'ORG_ADMIN' | 'TEAM_ADMIN' | 'FINANCE' | 'MEMBER';
  orgId: string | null;
  teamId: string | null;
  userId: string | null;
  /** The token and the person behind it, as the audit trail shows them (set when authenticated). */
  actor?: AdminActor;
}

/** An admin token as the audit trail names it: the token (id, name, prefix) and who holds it. */
export interface AdminActor {
  tokenId: string;
  tokenName: string;
  tokenPrefix: string | null;
  role: AdminPrincipal['role'];
  /** The person the token names, or null (then `ownerLabel` says who holds it). */
  user: { id: string; name: string | null; email: string } | null;
  ownerLabel: string | null;
}
