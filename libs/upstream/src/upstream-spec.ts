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
  /** Changes whenever the upstream's settings change, so pooled clients are replaced. */
  version: string;
}
