/** How to reach one upstream MCP server. */
export interface UpstreamSpec {
  id: string;
  orgId: string;
  namespace: string;
  transport: 'STDIO' | 'STREAMABLE_HTTP' | 'SSE';
  command: string | null;
  args: string[];
  url: string | null;
  /** Plain headers sent to HTTP upstreams (secrets already decrypted by the caller). */
  headers: Record<string, string>;
  /** Extra environment for stdio upstreams. */
  env: Record<string, string>;
  callTimeoutMs: number;
  /** PER_USER_OAUTH: each call carries the calling user's own access token (see the pool's `session`). */
  authMode?: 'NONE' | 'STATIC_SECRET' | 'PER_USER_OAUTH';
  /**
   * The MCP revision the last catalog sync found the upstream to speak (`2026-07-28`, or the version
   * a 2025-11-25-or-earlier session agreed on); null before its first sync. The edge speaks the same.
   */
  revision?: string | null;
  /** Changes whenever the upstream's settings change, so pooled clients are replaced. */
  version: string;
}
