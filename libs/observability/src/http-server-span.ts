import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  propagation,
  trace,
  type Context,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import { LogContext, runWithLogContext } from './log-context';
import { sampledOutContext } from './sampled-out-context';
import { headSampling, propagatorFields, telemetryRunning } from './telemetry';

const tracer = trace.getTracer('tollgate-http');
const SERVER_SPAN = { kind: SpanKind.SERVER };

/** Whether HeadSampling.rootSpan made a span (else the dropped span's context). */
function isSpan(started: Span | SpanContext): started is Span {
  return typeof (started as Span).spanContext === 'function';
}

/**
 * The trace context the request's headers carry, or the root context when they hold none of the
 * propagators' fields (most agents send none): extracting from those finds nothing, after each
 * propagator's look-ups and a context made for nothing, on every unsampled request.
 */
function parentOf(headers: IncomingMessage['headers']): Context {
  for (const field of propagatorFields()) {
    if (headers[field] !== undefined) return propagation.extract(ROOT_CONTEXT, headers);
  }
  return ROOT_CONTEXT;
}

/**
 * Runs `fn` (the request's handling) with the request's log context `log` and in the request's HTTP
 * server span (`route`: its template, if known), a child of the trace context its headers carry,
 * named and attributed after the HTTP semantic conventions. Both go into the one request scope
 * (runWithLogContext): a scope each would copy the async context once more per request. An app that
 * calls this starts telemetry with `ownServerSpans` (the edge): the http instrumentation's own
 * server span builds its attributes, binds the request's emitters and records a duration histogram
 * for every request, sampled or not, which was most of what tracing cost an unsampled call. Here an
 * unsampled request costs the sampler's decision and one context switch.
 */
export function inHttpServerSpan(
  req: IncomingMessage,
  res: ServerResponse,
  route: string | undefined,
  log: LogContext,
  fn: () => void,
): void {
  if (!telemetryRunning()) return runWithLogContext(log, fn);
  const parent = parentOf(req.headers);
  const method = req.method ?? 'GET';
  // Named `{method} {route}`, or the method alone when the route is not known (the conventions' rule).
  // Attributes once sampled: the samplers OTEL_TRACES_SAMPLER can name decide on the trace id and
  // parent alone, and a sampled-out request should not pay for the SDK's copy of them.
  const name = route ? `${method} ${route}` : method;
  // A request with no trace context (most) is sampled before its span is made (HeadSampling): a
  // dropped one gets only its span context, not the SDK's non-recording span and what it costs.
  const head = parent === ROOT_CONTEXT ? headSampling() : undefined;
  const started: Span | SpanContext = head
    ? head.rootSpan(tracer, name, SERVER_SPAN)
    : tracer.startSpan(name, SERVER_SPAN, parent);
  if (!isSpan(started)) return runWithLogContext(log, fn, sampledOutContext(parent, started));
  const span = started;
  if (!span.isRecording()) return runWithLogContext(log, fn, sampledOutContext(parent, span.spanContext()));
  span.setAttribute('http.request.method', method);
  if (route) span.setAttribute('http.route', route);
  span.setAttribute('url.path', (req.url ?? '/').split('?', 1)[0]);
  // Ended when the answer is sent, or when the client goes first (a closed stream).
  const end = () => {
    res.off('finish', end).off('close', end);
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
  res.once('finish', end).once('close', end);
  runWithLogContext(log, fn, trace.setSpan(parent, span));
}
