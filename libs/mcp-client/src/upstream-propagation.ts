import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What travels with a call to its upstream besides the call itself: HTTP headers (`traceparent`,
 * `tracestate`, `baggage`, `x-request-id`) and the same trace context in `params._meta`, as the
 * OpenTelemetry semantic conventions for MCP ask. The edge sets it around the upstream call; the
 * Streamable HTTP caller adds it to the request.
 */
export interface UpstreamPropagation {
  headers: Record<string, string>;
  meta: Record<string, string>;
}

const PROPAGATION = new AsyncLocalStorage<UpstreamPropagation>();

export function runWithUpstreamPropagation<T>(propagation: UpstreamPropagation, fn: () => Promise<T>): Promise<T> {
  return PROPAGATION.run(propagation, fn);
}

export function currentUpstreamPropagation(): UpstreamPropagation | undefined {
  return PROPAGATION.getStore();
}
