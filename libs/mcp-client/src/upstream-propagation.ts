/**
 * What travels with a call to its upstream besides the call itself: HTTP headers (`traceparent`,
 * `tracestate`, `baggage`, `x-request-id`) and the same trace context in `params._meta`, as the
 * OpenTelemetry semantic conventions for MCP ask. The edge makes it for each governed `tools/call`
 * and passes it down with the call (`UpstreamClientPool.callTool`); each wire adds it to the request
 * (Streamable HTTP: headers and `_meta`; stdio and SSE: `_meta` only).
 */
export interface UpstreamPropagation {
  headers: Record<string, string>;
  meta: Record<string, string>;
}
