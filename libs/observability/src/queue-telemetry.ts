/* eslint-disable @typescript-eslint/no-require-imports -- bullmq-otel loads only when telemetry is on */
import { context, INVALID_SPAN_CONTEXT, isSpanContextValid, trace, type Context } from '@opentelemetry/api';
import type { Telemetry } from 'bullmq';
import { telemetryRunning } from './telemetry';

/** BullMQ's SpanKind.INTERNAL (bullmq's own enum, not OpenTelemetry's). */
const BULLMQ_INTERNAL = 0;

/**
 * BullMQ's built-in OpenTelemetry support (its `telemetry` option, implemented by the bullmq-otel
 * package) for the queues and workers of an app, or undefined while telemetry is off. A job added
 * inside a span (an admin request, a call on the edge) carries that trace context in the job; the
 * worker's `process <queue>` span (CONSUMER) continues it, and its Postgres, Redis and HTTP spans
 * sit under it.
 *
 * BullMQ also traces its own housekeeping (`getNextJob` on every blocking poll, stalled-job checks,
 * pauses): outside any trace those would start a new trace every few seconds per queue and worker,
 * so they are recorded only when they are part of a trace already.
 */
export function queueTelemetry(): Telemetry | undefined {
  if (!telemetryRunning()) return undefined;
  const { BullMQOtel, BullMQOTelSpan } = require('bullmq-otel') as typeof import('bullmq-otel');
  const otel = new BullMQOtel({ tracerName: 'bullmq' });
  const tracer = otel.tracer;
  const idle = new BullMQOTelSpan(trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
  return {
    contextManager: otel.contextManager,
    tracer: {
      startSpan(name: string, options?: { kind?: number }, ctx?: Context) {
        const parent = trace.getSpanContext(ctx ?? context.active());
        const housekeeping = options?.kind === BULLMQ_INTERNAL && !(parent && isSpanContextValid(parent));
        return housekeeping ? idle : tracer.startSpan(name, options, ctx);
      },
    },
  };
}
