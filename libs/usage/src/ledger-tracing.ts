import { Link, ROOT_CONTEXT, Span, SpanKind, SpanStatusCode, propagation, trace } from '@opentelemetry/api';
import { UsageEvent } from './usage-event';
import { telemetryRunning } from '@tollgate/observability';

const tracer = trace.getTracer('tollgate-worker');
/** The messaging destination the usage outbox's streams go by in spans. */
const USAGE_OUTBOX_NAME = 'usage-outbox';

/**
 * Runs `write` (one batch INSERT of `events` into the ledger) so that each call's trace shows its
 * ledger write: a `process usage-outbox` span (CONSUMER, after the OpenTelemetry messaging
 * conventions) per event that carries a trace context, child of the edge's `tools/call` span, over
 * the time of the write. The batch itself is one `usage-ledger write` span linked to those, under
 * which the INSERT's Postgres span sits (one statement cannot be the child of every call). Off,
 * `write` runs as it is.
 */
export function inLedgerWriteSpans<T>(events: UsageEvent[], write: () => Promise<T>): Promise<T> {
  if (!telemetryRunning()) return write();
  const perCall: Span[] = [];
  for (const event of events) {
    if (!event.traceparent) continue;
    const parent = propagation.extract(ROOT_CONTEXT, { traceparent: event.traceparent });
    perCall.push(
      tracer.startSpan(
        `process ${USAGE_OUTBOX_NAME}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            'messaging.operation.type': 'process',
            'messaging.destination.name': USAGE_OUTBOX_NAME,
            'messaging.batch.message_count': events.length,
            'tollgate.call.id': event.id,
            'tollgate.org.id': event.orgId,
          },
        },
        parent,
      ),
    );
  }
  const links: Link[] = perCall.map((span) => ({ context: span.spanContext() }));
  return tracer.startActiveSpan(
    'usage-ledger write',
    { kind: SpanKind.INTERNAL, links, attributes: { 'messaging.batch.message_count': events.length } },
    async (batch) => {
      const spans = [batch, ...perCall];
      try {
        return await write();
      } catch (err) {
        for (const span of spans) {
          span.setAttribute('error.type', (err as Error).name ?? 'Error');
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        }
        throw err;
      } finally {
        for (const span of spans) span.end();
      }
    },
  );
}
