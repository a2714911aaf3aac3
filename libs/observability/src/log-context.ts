import { AsyncLocalStorage } from 'node:async_hooks';

/** Who and what a log line is about; every line written inside a request carries these fields. */
export interface LogContext {
  requestId?: string;
  callId?: string;
  orgId?: string;
  keyId?: string;
  /** Not logged: the trace context the request came with, and its JSON-RPC id and MCP session. */
  trace?: RequestTrace;
}

/**
 * The W3C trace context (`traceparent`, `tracestate`, `baggage`) an agent sent, from the HTTP
 * headers or, as the OpenTelemetry semantic conventions for MCP allow, from `params._meta`.
 */
export interface RequestTrace {
  carrier: Record<string, string>;
  /** The carrier came from `params._meta` (which then wins over the headers). */
  fromMeta: boolean;
  jsonRpcId?: string | number;
  sessionId?: string;
}

const TRACE_FIELDS = ['traceparent', 'tracestate', 'baggage'] as const;

/** The trace context fields of headers or `_meta` (string values only). */
export function traceCarrierOf(source: Record<string, unknown> | undefined): Record<string, string> {
  const carrier: Record<string, string> = {};
  for (const field of TRACE_FIELDS) {
    const value = source?.[field];
    if (typeof value === 'string' && value.length <= 8192) carrier[field] = value;
  }
  return carrier;
}

/** The fields every log line carries (the trace context is not one of them). */
export function loggedContext(): Omit<LogContext, 'trace'> {
  const c = CONTEXT.getStore();
  if (!c) return {};
  return { requestId: c.requestId, callId: c.callId, orgId: c.orgId, keyId: c.keyId };
}

const CONTEXT = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with a log context of its own (one per HTTP request or job). */
export function runWithLogContext<T>(context: LogContext, fn: () => T): T {
  return CONTEXT.run(context, fn);
}

/** Adds fields (the org and key once authenticated, the call id once priced) to the current context. */
export function addToLogContext(fields: LogContext): void {
  const current = CONTEXT.getStore();
  if (current) Object.assign(current, fields);
}

export function currentLogContext(): LogContext | undefined {
  return CONTEXT.getStore();
}
