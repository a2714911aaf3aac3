/**
 * A Streamable HTTP upstream answered HTTP 404 to a request that carried our `Mcp-Session-Id`:
 * it no longer knows the session (it restarted, or expired it), so nothing was run and the
 * pooled connection must be set up again.
 */
export class UpstreamSessionExpiredError extends Error {
  constructor() {
    super('the upstream no longer knows the MCP session (HTTP 404)');
    this.name = 'UpstreamSessionExpiredError';
  }
}
