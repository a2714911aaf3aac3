import { ROOT_CONTEXT, context, createContextKey, propagation, trace } from '@opentelemetry/api';
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
  isTracingSuppressed,
} from '@opentelemetry/core';
import {
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestScopeContextManager } from './request-scope-context-manager';
import { sampledOutContext, sampledOutTrace } from './sampled-out-context';

describe('sampledOutContext', () => {
  const exporter = new InMemorySpanExporter();
  // The sampler the edge runs with at 1 call in 100, at 0: every root span is dropped.
  const tracer = new TracerProvider({
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  }).getTracer('test');

  beforeAll(() => {
    context.setGlobalContextManager(new RequestScopeContextManager());
    propagation.setGlobalPropagator(
      new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
    );
  });
  afterAll(() => {
    context.disable();
    propagation.disable();
  });

  it('should make no span inside a sampled-out request and still hand on its trace, not sampled, when asked for it', () => {
    const parent = propagation.extract(ROOT_CONTEXT, { baggage: 'tenant=acme' });
    const dropped = tracer.startSpan('POST /mcp', {}, parent);
    expect(dropped.isRecording()).toBe(false);

    const carrier: Record<string, string> = {};
    const inside = context.with(sampledOutContext(parent, dropped), () => {
      const child = tracer.startSpan('tollgate.policy');
      child.end();
      propagation.inject(sampledOutTrace(context.active())!, carrier);
      return { activeSpan: trace.getActiveSpan(), child: child.spanContext() };
    });

    // What an instrumentation checks before doing a span's work: no active span (and tracing suppressed).
    expect(inside.activeSpan).toBeUndefined();
    expect(trace.isSpanContextValid(inside.child)).toBe(false);
    const { traceId, spanId } = dropped.spanContext();
    expect(carrier).toEqual({ traceparent: `00-${traceId}-${spanId}-00`, baggage: 'tenant=acme' });
    // Against a call the agent's trace says is sampled, whose span the same tracer exports.
    const sampled = propagation.extract(ROOT_CONTEXT, { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` });
    tracer.startSpan('POST /mcp', {}, sampled).end();
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['POST /mcp']);
  });

  it('should keep tracing suppressed and the dropped trace in a context derived from a sampled-out one', () => {
    const dropped = tracer.startSpan('POST /mcp', {}, ROOT_CONTEXT);
    const key = createContextKey('derived');
    const derived = sampledOutContext(ROOT_CONTEXT, dropped).setValue(key, 'x');

    expect(derived.getValue(key)).toBe('x');
    expect(isTracingSuppressed(derived)).toBe(true);
    expect(trace.getSpan(derived)).toBeUndefined();
    expect(trace.getSpan(sampledOutTrace(derived)!)).toBe(dropped);
    expect(sampledOutTrace(derived.deleteValue(key))).toBe(sampledOutTrace(derived));
  });

  it('should be no sampled-out trace outside a sampled-out request', () => {
    expect(sampledOutTrace(ROOT_CONTEXT)).toBeUndefined();
  });
});
