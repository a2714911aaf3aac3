import { ROOT_CONTEXT, SpanKind, TraceFlags, trace, type Span, type SpanContext } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { HeadSampling, samplerFromEnv } from './head-sampling';

/** A tracer whose provider has `head`'s sampler and id generator, as startTelemetry gives the SDK. */
function tracerWith(head: HeadSampling, sampler: ParentBasedSampler, exporter: InMemorySpanExporter) {
  return new TracerProvider({
    sampler,
    idGenerator: head.idGenerator,
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  }).getTracer('test');
}

const isSpan = (started: Span | SpanContext): started is Span => 'end' in started;

describe('HeadSampling', () => {
  it("should keep the root spans the SDK's sampler keeps, with the trace id it decided on, and drop the others before any span is made", () => {
    // One in two: over 400 root spans both outcomes occur; each kept one's trace id must be the
    // one decided on (the ratio sampler decides on it), else about half would be dropped again.
    const ratio = new TraceIdRatioBasedSampler(0.5);
    const sampler = new ParentBasedSampler({ root: ratio });
    const head = new HeadSampling(sampler);
    const exporter = new InMemorySpanExporter();
    const tracer = tracerWith(head, sampler, exporter);

    let dropped = 0;
    for (let i = 0; i < 400; i++) {
      const started = head.rootSpan(tracer, 'POST /mcp', { kind: SpanKind.SERVER });
      if (isSpan(started)) {
        expect(started.isRecording()).toBe(true);
        started.end();
        continue;
      }
      dropped++;
      expect(started.traceFlags).toBe(TraceFlags.NONE);
      expect(trace.isSpanContextValid(started)).toBe(true);
      // What the SDK's own sampler says of that trace id.
      expect(ratio.shouldSample(ROOT_CONTEXT, started.traceId).decision).toBe(0);
    }
    const kept = exporter.getFinishedSpans();
    expect(dropped).toBeGreaterThan(100);
    expect(kept.length).toBe(400 - dropped);
    for (const span of kept) {
      expect(span.spanContext().traceFlags).toBe(TraceFlags.SAMPLED);
      expect(ratio.shouldSample(ROOT_CONTEXT, span.spanContext().traceId).decision).not.toBe(0);
    }
    // The trace ids are fresh for every root span, and the SDK's next root span gets one of its own.
    expect(new Set(kept.map((s) => s.spanContext().traceId)).size).toBe(kept.length);
    const next = tracer.startSpan('other', {}, ROOT_CONTEXT);
    expect(kept.map((s) => s.spanContext().traceId)).not.toContain(next.spanContext().traceId);
  });

  it('should build the sampler OTEL_TRACES_SAMPLER names as the SDK does, and leave a name it does not know to the SDK', () => {
    const decision = (env: NodeJS.ProcessEnv, traceId = 'f'.repeat(32)) =>
      samplerFromEnv(env)?.shouldSample(ROOT_CONTEXT, traceId, 'x', SpanKind.SERVER, {}, []).decision;
    expect(samplerFromEnv({})?.toString()).toMatch(/^ParentBased\{root=AlwaysOnSampler,/);
    expect(decision({ OTEL_TRACES_SAMPLER: 'always_off' })).toBe(0);
    expect(decision({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })).toBe(0);
    expect(
      samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' })?.toString(),
    ).toBe(
      'ParentBased{root=TraceIdRatioBased{0.01}, remoteParentSampled=AlwaysOnSampler, remoteParentNotSampled=AlwaysOffSampler, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler}',
    );
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toBeUndefined();
  });
});
