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
import { isSampledOut, sampledOutContext, sampledOutTrace, sampledOutTraceparent } from './sampled-out-context';

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
    const inside = context.with(sampledOutContext(parent, dropped.spanContext()), () => {
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
    // The baggage is the agent's: the traceparent alone would leave it out, so there is none.
    expect(sampledOutTraceparent(sampledOutContext(parent, dropped.spanContext()))).toBeUndefined();
    // Against a call the agent's trace says is sampled, whose span the same tracer exports.
    const sampled = propagation.extract(ROOT_CONTEXT, { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` });
    tracer.startSpan('POST /mcp', {}, sampled).end();
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['POST /mcp']);
  });

  it('should keep tracing suppressed and the dropped trace in a context derived from a sampled-out one', () => {
    const dropped = tracer.startSpan('POST /mcp', {}, ROOT_CONTEXT);
    const key = createContextKey('derived');
    const derived = sampledOutContext(ROOT_CONTEXT, dropped.spanContext()).setValue(key, 'x');

    expect(derived.getValue(key)).toBe('x');
    expect(isTracingSuppressed(derived)).toBe(true);
    expect(isSampledOut(derived)).toBe(true);
    expect(trace.getSpan(derived)).toBeUndefined();
    expect(trace.getSpan(sampledOutTrace(derived)!)?.spanContext()).toEqual(dropped.spanContext());
    expect(sampledOutTrace(derived.deleteValue(key))).toBe(sampledOutTrace(derived));
  });

  it('should hand on the traceparent the propagators would inject for a sampled-out request that came with no trace context', () => {
    const dropped = tracer.startSpan('POST /mcp', {}, ROOT_CONTEXT).spanContext();
    const sampledOut = sampledOutContext(ROOT_CONTEXT, dropped);
    const carrier: Record<string, string> = {};
    propagation.inject(sampledOutTrace(sampledOut)!, carrier);

    expect(sampledOutTraceparent(sampledOut)).toBe(`00-${dropped.traceId}-${dropped.spanId}-00`);
    expect({ traceparent: sampledOutTraceparent(sampledOut) }).toEqual(carrier);
  });

  it('should be no sampled-out trace outside a sampled-out request', () => {
    expect(sampledOutTrace(ROOT_CONTEXT)).toBeUndefined();
    expect(isSampledOut(ROOT_CONTEXT)).toBe(false);
    expect(sampledOutTraceparent(ROOT_CONTEXT)).toBeUndefined();
  });
});
