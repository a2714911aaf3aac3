import {
  ROOT_CONTEXT,
  SamplingDecision,
  SpanKind,
  TraceFlags,
  diag,
  type Attributes,
  type Link,
  type Sampler,
  type SpanContext,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  RandomIdGenerator,
  TraceIdRatioBasedSampler,
  type IdGenerator,
} from '@opentelemetry/sdk-trace';

const NO_ATTRIBUTES: Attributes = Object.freeze({});
const NO_LINKS: Link[] = [];

/**
 * The sampler `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` name, built as the Node SDK builds
 * it (parentbased_always_on when unset), or undefined for a name this does not build (the SDK then
 * builds its own and warns). Each of these decides on the parent and the trace id alone.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv): Sampler | undefined {
  const name = (env.OTEL_TRACES_SAMPLER ?? '').trim();
  const ratio = () => {
    const arg = (env.OTEL_TRACES_SAMPLER_ARG ?? '').trim();
    const value = Number(arg);
    if (arg === '' || Number.isNaN(value) || value < 0 || value > 1) {
      diag.error(`OTEL_TRACES_SAMPLER_ARG "${arg}" is blank or out of [0..1], defaulting to 1.`);
      return 1;
    }
    return value;
  };
  switch (name) {
    case '':
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    default:
      return undefined;
  }
}

/**
 * A root span's sampling decided before the span is made. The SDK's `startSpan` for a span its
 * sampler drops still makes ids, cleans the (empty) attributes, counts the span for its own metrics
 * and wraps a non-recording span, all on every unsampled request; most of it is for nothing when the
 * request carries no trace context. Here the sampler the SDK was given (samplerFromEnv) decides on a
 * fresh trace id first: dropped, the request's span context is made here, without a span; kept,
 * the SDK makes the span with that same trace id (its id generator hands it over), and its sampler
 * decides again, the same way, since it decides on the (root) parent and the trace id alone.
 */
export class HeadSampling {
  private readonly random = new RandomIdGenerator();
  /** The trace id decided on, for the SDK's next root span (only within rootSpan). */
  private decidedTraceId: string | undefined;

  /** The SDK's id generator (NodeSDK's `idGenerator`). */
  readonly idGenerator: IdGenerator = {
    generateTraceId: () => this.decidedTraceId ?? this.random.generateTraceId(),
    generateSpanId: () => this.random.generateSpanId(),
  };

  constructor(private readonly sampler: Sampler) {}

  /**
   * A root span `name` of `kind` (no parent), started by `tracer` if the sampler keeps it; if it
   * drops it, the span context the request carries on (not sampled), and no span.
   */
  rootSpan(tracer: Tracer, name: string, options: SpanOptions & { kind: SpanKind }): Span | SpanContext {
    const traceId = this.random.generateTraceId();
    const { decision, traceState } = this.sampler.shouldSample(
      ROOT_CONTEXT,
      traceId,
      name,
      options.kind,
      NO_ATTRIBUTES,
      NO_LINKS,
    );
    if (decision === SamplingDecision.NOT_RECORD) {
      return { traceId, spanId: this.random.generateSpanId(), traceFlags: TraceFlags.NONE, traceState };
    }
    this.decidedTraceId = traceId;
    try {
      return tracer.startSpan(name, options, ROOT_CONTEXT);
    } finally {
      this.decidedTraceId = undefined;
    }
  }
}
