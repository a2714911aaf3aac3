import {
  Attributes,
  Context,
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  context,
  isSpanContextValid,
  propagation,
  trace,
} from '@opentelemetry/api';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { suppressTracing } from '@opentelemetry/core';
import {
  currentLogContext,
  isSampledOut,
  sampledOutContext,
  sampledOutTrace,
  sampledOutTraceparent,
  telemetryRunning,
} from '@tollgate/observability';
import { validTraceparent } from '@tollgate/usage';
import { UpstreamPropagation } from '@tollgate/mcp-client';
import { toolErrorOf } from './tool-error';

/**
 * The governed call's spans, named and attributed after the OpenTelemetry semantic conventions for
 * MCP (`tools/call <tool>`, `mcp.method.name`, `gen_ai.tool.name`, `mcp.session.id`,
 * `jsonrpc.request.id`, `error.type`) plus Tollgate's own (`tollgate.*`: org, key, call, cost,
 * tokens; never a secret). Without the SDK (telemetry off) every call here runs `fn` straight
 * away: no span, attribute object or context look-up is made on the call path.
 */
const tracer = trace.getTracer('tollgate-edge');
// What `fn` gets while telemetry is off: records nothing.
const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Runs `fn` in a child span `name`; a throw marks it failed with its `error.type`. In a sampled-out
 * call (sampledOutContext: tracing suppressed, no active span) no child is made: it would not be
 * recorded either, and its context switch is most of what an unsampled call would pay. `leaf`:
 * `fn`'s own client calls (the admission and completion scripts' Redis commands) get no spans,
 * sampled or not: this span is their span.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  options?: { kind?: SpanKind; leaf?: boolean },
): Promise<T> {
  // Options read only past these checks: a default `= {}` would be an object made on every call.
  if (!telemetryRunning()) return fn(NO_SPAN);
  if (isSampledOut(context.active())) return fn(NO_SPAN);
  const kind = options?.kind ?? SpanKind.INTERNAL;
  const leaf = options?.leaf ?? false;
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await (leaf ? context.with(LEAF_CONTEXT, fn, undefined, span) : fn(span));
    } catch (err) {
      failSpan(span, (err as Error).name ?? 'Error', err as Error);
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * Whether inSpan makes a span here (telemetry on, the call sampled). Where it makes none, a step
 * whose answer is at hand (a cached catalog, policy or price book) need not be run inside it.
 */
export function spansMade(): boolean {
  return telemetryRunning() && !isSampledOut(context.active());
}

/**
 * The context a leaf's own client calls run in: no active span and tracing suppressed. The ioredis
 * instrumentation serializes a command's arguments into span attributes whenever any span is
 * active, recorded or not (an unsampled call's too); with none active it sends the command as is.
 * One context for every leaf: a leaf's client calls read nothing else of the context (no span, no
 * baggage goes to Redis), and one made per call would be one more allocation on every call.
 */
const LEAF_CONTEXT: Context = suppressTracing(ROOT_CONTEXT);

/**
 * The `tools/call` span (kind SERVER): child of the HTTP request's span, or of the trace context
 * the agent put in `params._meta` (which then wins, as the conventions say).
 */
export function inToolCallSpan(
  exposedName: string,
  principal: { orgId: string; keyId: string },
  fn: (span: Span) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  if (!telemetryRunning()) return fn(NO_SPAN);
  const requestTrace = currentLogContext()?.trace;
  // The HTTP request's span was sampled out, and the agent's _meta does not say otherwise.
  if (!requestTrace?.fromMeta && isSampledOut(context.active())) return fn(NO_SPAN);
  const attributes: Attributes = {
    'mcp.method.name': 'tools/call',
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': exposedName,
    'tollgate.org.id': principal.orgId,
    'tollgate.key.id': principal.keyId,
  };
  if (requestTrace?.sessionId) attributes['mcp.session.id'] = requestTrace.sessionId;
  if (requestTrace?.jsonRpcId !== undefined) attributes['jsonrpc.request.id'] = String(requestTrace.jsonRpcId);
  const parent: Context = requestTrace?.fromMeta
    ? propagation.extract(ROOT_CONTEXT, requestTrace.carrier)
    : context.active();
  const span = tracer.startSpan(`tools/call ${exposedName}`, { kind: SpanKind.SERVER, attributes }, parent);
  // The agent's _meta marked the call not sampled: as a sampled-out HTTP request (inHttpServerSpan).
  if (!span.isRecording()) return context.with(sampledOutContext(parent, span.spanContext()), fn, undefined, NO_SPAN);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      const result = await fn(span);
      describeResult(span, result);
      return result;
    } catch (err) {
      failSpan(span, (err as Error).name ?? 'Error', err as Error);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The call's outcome on its span: cost, tokens, call id, and `error.type` for a refusal or failure. */
function describeResult(span: Span, result: CallToolResult): void {
  const call = result._meta?.['tollgate/call'] as
    { callId?: string; costMicros?: number | string; outputTokens?: number } | undefined;
  if (call?.callId) span.setAttribute('tollgate.call.id', call.callId);
  if (call?.costMicros !== undefined) span.setAttribute('tollgate.cost.micros', Number(call.costMicros));
  if (call?.outputTokens !== undefined) span.setAttribute('gen_ai.usage.output_tokens', call.outputTokens);
  if (result.isError) failSpan(span, toolErrorOf(result)?.code ?? 'tool_error');
}

function failSpan(span: Span, errorType: string, err?: Error): void {
  span.setAttribute('error.type', errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message: err?.message });
  if (err) span.recordException(err);
}

/**
 * What goes to the upstream with the call: the request id, and the trace context in `params._meta`
 * and in the headers: the upstream client span's when telemetry is on (the undici instrumentation
 * then makes no HTTP span of its own for the request, see startTelemetry), else the agent's own
 * context, passed through.
 */
export function upstreamPropagation(): UpstreamPropagation {
  const logContext = currentLogContext();
  let traceContext = logContext?.trace?.carrier ?? NO_TRACE_CONTEXT;
  if (telemetryRunning()) {
    // A sampled-out call with no trace context of the agent's hands on its traceparent alone.
    const traceparent = sampledOutTraceparent(context.active());
    if (traceparent !== undefined) return withRequestId({ traceparent }, logContext?.requestId);
    const carrier: Record<string, string> = {};
    propagation.inject(tracedContext(), carrier);
    if (carrier.traceparent !== undefined) traceContext = carrier;
  }
  // Most agents send no trace context: their calls share one empty `_meta` (the wires only read it).
  return withRequestId(isEmpty(traceContext) ? NO_TRACE_CONTEXT : { ...traceContext }, logContext?.requestId);
}

const NO_TRACE_CONTEXT: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** `meta` (a trace context of this call's, or NO_TRACE_CONTEXT) in `_meta`, and with the request id in the headers. */
function withRequestId(meta: Record<string, string>, requestId: string | undefined): UpstreamPropagation {
  const headers: Record<string, string> = { ...meta };
  if (requestId) headers['x-request-id'] = requestId;
  return { headers, meta };
}

function isEmpty(record: Record<string, string>): boolean {
  for (const _ in record) return false;
  return true;
}

/**
 * The trace context a call's usage event carries to the worker (whose ledger write joins the trace)
 * and the ledger row (its trace id): the active span's with telemetry on, else the one the agent
 * sent, if well-formed.
 */
export function usageTraceparent(): string | null {
  if (telemetryRunning()) {
    const sampledOut = sampledOutTraceparent(context.active());
    if (sampledOut !== undefined) return sampledOut;
    const active = trace.getSpanContext(tracedContext());
    if (active && isSpanContextValid(active)) {
      return `00-${active.traceId}-${active.spanId}-${active.traceFlags.toString(16).padStart(2, '0')}`;
    }
  }
  return validTraceparent(currentLogContext()?.trace?.carrier.traceparent);
}

/** The active context, or the one a sampled-out call would have had: what carries its trace on. */
function tracedContext(): Context {
  const active = context.active();
  return sampledOutTrace(active) ?? active;
}

/** The upstream `tools/call` client span. */
export function upstreamSpanAttributes(tool: string, upstream: string): Attributes {
  return { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': tool, 'tollgate.upstream': upstream };
}
