import type { IncomingMessage, ServerResponse } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, trace, type Context } from '@opentelemetry/api';
import { LogContext, runWithLogContext } from './log-context';
import { sampledOutContext } from './sampled-out-context';
import { telemetryRunning } from './telemetry';

const tracer = trace.getTracer('tollgate-http');
const SERVER_SPAN = { kind: SpanKind.SERVER };

/**
 * The trace context the request's headers carry, or the root context when they hold none of the
 * propagators' fields (most agents send none): extracting from those finds nothing, after each
 * propagator's look-ups and a context made for nothing, on every unsampled request.
 */
function parentOf(headers: IncomingMessage['headers']): Context {
  for (const field of propagation.fields()) {
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
  const span = tracer.startSpan(route ? `${method} ${route}` : method, SERVER_SPAN, parent);
  if (!span.isRecording()) return runWithLogContext(log, fn, sampledOutContext(parent, span));
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
