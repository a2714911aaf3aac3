import { ROOT_CONTEXT, createContextKey, trace, type Context, type Span } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';

const SAMPLED_OUT = createContextKey('tollgate sampled-out trace');
const SUPPRESSED = suppressTracing(ROOT_CONTEXT);

/**
 * The context a request (or call) runs in once the sampler dropped its span: tracing suppressed and
 * no active span, with the context it would have had (`parent` with the dropped `span` in it) kept
 * aside for what still carries the trace on (the upstream's headers and `_meta`, the ledger row's
 * trace id; sampledOutTrace). With a span active, sampled or not, every instrumented client call
 * does its span's work (the ioredis instrumentation serializes each command's arguments into
 * attributes and wraps its callbacks, then the sampler drops the span); with none and tracing
 * suppressed, the instrumentations and the tracer return at their first check.
 */
export function sampledOutContext(parent: Context, span: Span): Context {
  return SUPPRESSED.setValue(SAMPLED_OUT, trace.setSpan(parent, span));
}

/** The context a sampled-out request would have run in (its dropped span active), if `ctx` is one's. */
export function sampledOutTrace(ctx: Context): Context | undefined {
  return ctx.getValue(SAMPLED_OUT) as Context | undefined;
}
