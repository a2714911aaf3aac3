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
  /** Changes whenever the upstream's settings change, so pooled clients are replaced. */
  version: string;
}
