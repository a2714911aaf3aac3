import { ROOT_CONTEXT, createContextKey, trace, type Context, type Span } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';

const SAMPLED_OUT = createContextKey('tollgate sampled-out trace');
const SUPPRESSED = suppressTracing(ROOT_CONTEXT);

/**
 * A sampled-out request's context as one small object: the API's own (BaseContext) is an object, a
 * Map and three closures per value set, and this one had two (the suppression and the kept trace),
 * held for the whole request by every one of the calls in flight (so copied by each scavenge, and
 * promoted), on every unsampled call. Reads answer as SUPPRESSED with the kept trace in it; the kept
 * trace (`parent` with the dropped span in it) is made when first asked for (the upstream's
 * headers ask, once per call); a context derived from this one (setValue, deleteValue) is a
 * BaseContext again.
 */
class SampledOutContext implements Context {
  private traced: Context | undefined;

  constructor(
    private readonly parent: Context,
    private readonly span: Span,
  ) {}

  getValue(key: symbol): unknown {
    if (key === SAMPLED_OUT) return (this.traced ??= trace.setSpan(this.parent, this.span));
    return SUPPRESSED.getValue(key);
  }

  setValue(key: symbol, value: unknown): Context {
    return this.materialized().setValue(key, value);
  }

  deleteValue(key: symbol): Context {
    return this.materialized().deleteValue(key);
  }

  private materialized(): Context {
    return SUPPRESSED.setValue(SAMPLED_OUT, this.getValue(SAMPLED_OUT));
  }
}

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
  return new SampledOutContext(parent, span);
}

/** The context a sampled-out request would have run in (its dropped span active), if `ctx` is one's. */
export function sampledOutTrace(ctx: Context): Context | undefined {
  return ctx.getValue(SAMPLED_OUT) as Context | undefined;
}
