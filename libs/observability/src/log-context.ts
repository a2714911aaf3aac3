import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from '@opentelemetry/api';

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
  const c = SCOPE.getStore()?.log;
  if (!c) return {};
  return { requestId: c.requestId, callId: c.callId, orgId: c.orgId, keyId: c.keyId };
}

/**
 * What runs inside a request or job: the app it belongs to, its log context and, with telemetry
 * on, the OpenTelemetry context (RequestScopeContextManager keeps it here). One AsyncLocalStorage
 * for all three: each one a process has enabled costs something on every promise it makes, and the
 * SDK's own context manager would be one more. Every scope made inside an app's keeps its `app`.
 */
interface RequestScope {
  app?: string;
  log?: LogContext;
  otel?: Context;
}

const SCOPE = new AsyncLocalStorage<RequestScope>();

/**
 * Runs `fn` (an app's creation, init, listen or close: see createNamedApp) as the app named `app`:
 * what it starts (servers, connections, timers, queue workers) runs in this scope too, so their
 * log lines name the app even where other apps share the process (tests run all three in one).
 */
export function runInAppScope<T>(app: string, fn: () => T): T {
  return SCOPE.run({ app }, fn);
}

/** The app whose scope this runs in (runInAppScope), if any. */
export function currentApp(): string | undefined {
  return SCOPE.getStore()?.app;
}

/**
 * Runs `fn` with a log context of its own (one per HTTP request or job), in the same app; `otel`:
 * the OpenTelemetry context it runs in (the request's span, see inHttpServerSpan), else the one
 * active now.
 */
export function runWithLogContext<T>(context: LogContext, fn: () => T, otel?: Context): T {
  const current = SCOPE.getStore();
  return SCOPE.run({ app: current?.app, log: context, otel: otel ?? current?.otel }, fn);
}

/** Adds fields (the org and key once authenticated, the call id once priced) to the current context. */
export function addToLogContext(fields: LogContext): void {
  const current = SCOPE.getStore()?.log;
  if (current) Object.assign(current, fields);
}

export function currentLogContext(): LogContext | undefined {
  return SCOPE.getStore()?.log;
}

/** The active OpenTelemetry context, if one was set (for RequestScopeContextManager). */
export function activeOtelContext(): Context | undefined {
  return SCOPE.getStore()?.otel;
}

/** Runs `fn` with `otel` as the active OpenTelemetry context, in the same log context (for RequestScopeContextManager). */
export function runWithOtelContext<A extends unknown[], R>(otel: Context, fn: (...args: A) => R, ...args: A): R {
  const current = SCOPE.getStore();
  return SCOPE.run({ app: current?.app, log: current?.log, otel }, fn, ...args);
}

/**
 * Makes `otel` the active OpenTelemetry context for the rest of this execution (for
 * RequestScopeContextManager's `attach`); answers the scope to restore.
 */
export function enterOtelContext(otel: Context): () => void {
  const previous = SCOPE.getStore();
  SCOPE.enterWith({ app: previous?.app, log: previous?.log, otel });
  return () => SCOPE.enterWith(previous ?? {});
}
