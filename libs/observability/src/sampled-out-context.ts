import { ROOT_CONTEXT, createContextKey, trace, type Context, type SpanContext } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { w3cPropagationOnly } from './telemetry';

const SAMPLED_OUT = createContextKey('tollgate sampled-out trace');
const SUPPRESSED = suppressTracing(ROOT_CONTEXT);

/**
 * A sampled-out request's context as one small object: the API's own (BaseContext) is an object, a
 * Map and three closures per value set, and this one had two (the suppression and the kept trace),
 * held for the whole request by every one of the calls in flight (so copied by each scavenge, and
 * promoted), on every unsampled call. Reads answer as SUPPRESSED with the kept trace in it; the kept
 * trace (`parent` with the dropped span in it) is made when first asked for; a context derived from
 * this one (setValue, deleteValue) is a BaseContext again.
 */
class SampledOutContext implements Context {
  private traced: Context | undefined;
  private w3cTraceparent: string | undefined;

  constructor(
    private readonly parent: Context,
    private readonly dropped: SpanContext,
  ) {}

  getValue(key: symbol): unknown {
    if (key === SAMPLED_OUT) return (this.traced ??= trace.setSpan(this.parent, trace.wrapSpanContext(this.dropped)));
    return SUPPRESSED.getValue(key);
  }

  setValue(key: symbol, value: unknown): Context {
    return this.materialized().setValue(key, value);
  }

  deleteValue(key: symbol): Context {
    return this.materialized().deleteValue(key);
  }

  /**
   * The `traceparent` the W3C propagators would inject from the kept trace, when that is all they
   * would inject: the request came with no trace context (no `tracestate`, no baggage to hand on)
   * and they are the propagators in use. Else undefined (inject from sampledOutTrace).
   */
  traceparent(): string | undefined {
    if (this.w3cTraceparent !== undefined) return this.w3cTraceparent;
    if (this.parent !== ROOT_CONTEXT || this.dropped.traceState !== undefined) return undefined;
    if (!w3cPropagationOnly()) return undefined;
    const { traceId, spanId, traceFlags } = this.dropped;
    return (this.w3cTraceparent = `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`);
  }

  private materialized(): Context {
    return SUPPRESSED.setValue(SAMPLED_OUT, this.getValue(SAMPLED_OUT));
  }
}

/**
 * The context a request (or call) runs in once the sampler dropped its span (`dropped`: the span
 * context it would have had): tracing suppressed and no active span, with the context it would
 * have had (`parent` with the dropped span in it) kept aside for what still carries the trace on
 * (the upstream's headers and `_meta`, the ledger row's trace id; sampledOutTrace). With a span
 * active, sampled or not, every instrumented client call does its span's work (the ioredis
 * instrumentation serializes each command's arguments into attributes and wraps its callbacks,
 * then the sampler drops the span); with none and tracing suppressed, the instrumentations and the
 * tracer return at their first check.
 */
export function sampledOutContext(parent: Context, dropped: SpanContext): Context {
  return new SampledOutContext(parent, dropped);
}

/** Whether `ctx` is a sampled-out request's (or derived from one), without making its kept trace. */
export function isSampledOut(ctx: Context): boolean {
  return ctx instanceof SampledOutContext || ctx.getValue(SAMPLED_OUT) !== undefined;
}

/** The context a sampled-out request would have run in (its dropped span active), if `ctx` is one's. */
export function sampledOutTrace(ctx: Context): Context | undefined {
  return ctx.getValue(SAMPLED_OUT) as Context | undefined;
}

/**
 * A sampled-out request's `traceparent` (not sampled), when it is all the propagators would hand on
 * from it (see SampledOutContext.traceparent): the upstream request and the usage event then take
 * it as is, without a context made and injected from for every unsampled call.
 */
export function sampledOutTraceparent(ctx: Context): string | undefined {
  return ctx instanceof SampledOutContext ? ctx.traceparent() : undefined;
}
