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
}
