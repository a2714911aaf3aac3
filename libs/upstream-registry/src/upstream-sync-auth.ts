/** Injection token for `UpstreamSyncAuth`; optional (the worker provides it). */
export const UPSTREAM_SYNC_AUTH = Symbol('UPSTREAM_SYNC_AUTH');

/**
 * Credentials to list the tools of a per-user OAuth upstream, which answers only a user: the
 * headers of some connected user (their bearer token), or null when nobody has connected yet.
 */
export interface UpstreamSyncAuth {
  headersForSync(orgId: string, upstreamId: string): Promise<Record<string, string> | null>;
}
