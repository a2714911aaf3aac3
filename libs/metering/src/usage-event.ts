import { randomUUID } from 'node:crypto';
import { Micros } from '@tollgate/kernel';
import type { UsageEventPayload } from '@tollgate/queue';
import { z } from 'zod';

const TRACEPARENT = /^[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

export interface UsageEvent {
  id: string;
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
  upstreamId: string;
  toolName: string;
  outcome: 'OK' | 'TOOL_ERROR' | 'UPSTREAM_ERROR';
  costMicros: Micros;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  priceRuleId: string | null;
  occurredAt: Date;
  /** The call's W3C `traceparent` (its trace id goes on the ledger row); absent or null: none. */
  traceparent?: string | null;
}

/** The value if it is a well-formed W3C `traceparent` (a valid, non-zero trace and span id), else null. */
export function validTraceparent(value: unknown): string | null {
  return typeof value === 'string' && TRACEPARENT.test(value) ? value : null;
}

/** The trace id (32 hex digits) of a W3C `traceparent`, as the ledger row keeps it; null without one. */
export function traceIdOf(traceparent: string | null | undefined): string | null {
  return traceparent ? traceparent.slice(3, 35) : null;
}

/** A fresh idempotency key for one governed call: ledger row id and reservation id. */
export function newCallId(): string {
  return randomUUID();
}

export function toPayload(e: UsageEvent): UsageEventPayload {
  return { ...e, costMicros: e.costMicros.toString(), occurredAt: e.occurredAt.toISOString() };
}

export function fromPayload(p: UsageEventPayload): UsageEvent {
  return { ...p, costMicros: BigInt(p.costMicros), occurredAt: new Date(p.occurredAt) };
}

// Exactly what the ledger's columns take: an entry the INSERT would refuse must fail here, or it
// would hold back its whole batch (a batch is written in one statement).
const id = z.string().min(1);
const uuid = z.string().uuid();
const int4 = z.number().int().min(-2_147_483_648).max(2_147_483_647);
const USAGE_EVENT_PAYLOAD_SCHEMA = z.object({
  id,
  orgId: uuid,
  teamId: uuid,
  userId: uuid,
  keyId: uuid,
  upstreamId: uuid,
  toolName: id,
  outcome: z.enum(['OK', 'TOOL_ERROR', 'UPSTREAM_ERROR']),
  costMicros: z.string().regex(/^-?\d{1,18}$/, 'must be an integer number of micro-units'),
  inputTokens: int4.nonnegative(),
  outputTokens: int4.nonnegative(),
  latencyMs: int4,
  priceRuleId: uuid.nullable(),
  occurredAt: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO date-time'),
  // Diagnostics, not money: a malformed trace context is dropped, never a reason to refuse the event.
  traceparent: z.string().regex(TRACEPARENT).nullable().optional().catch(null),
}) satisfies z.ZodType<UsageEventPayload, z.ZodTypeDef, unknown>;

/** One usage event checked: the event, or why it cannot be written. */
export type ParsedUsageEvent = { event: UsageEvent; problem?: never } | { event?: never; problem: string };

/** Validates one usage event payload (as an edge recorded it) against the payload schema. */
export function parseUsageEvent(item: unknown): ParsedUsageEvent {
  const parsed = USAGE_EVENT_PAYLOAD_SCHEMA.safeParse(item);
  if (parsed.success) return { event: fromPayload(parsed.data) };
  return {
    problem: parsed.error.issues.map((issue) => `${issue.path.join('.') || 'event'} ${issue.message}`).join(', '),
  };
}

/** The id an event claims to have, for log lines and dead letters; null when it names none. */
export function claimedEventId(item: unknown): string | null {
  return isRecord(item) && typeof item.id === 'string' ? item.id : null;
}

/** The events of a usage job that can be written, and why any others cannot. */
export interface ParsedUsageBatch {
  events: UsageEvent[];
  problems: string[];
}

/**
 * Validates a usage job's payload: `{ events: [...] }`, or one bare event as edges queued it
 * before group commit (so a job left in Redis across an upgrade is still written). An invalid
 * event does not hold back the valid ones of its batch.
 */
export function parseUsageBatch(data: unknown): ParsedUsageBatch {
  const raw =
    isRecord(data) && Array.isArray(data.events)
      ? (data.events as unknown[])
      : isRecord(data) && 'id' in data
        ? [data]
        : null;
  if (raw === null) return { events: [], problems: ['the payload is neither { events: [...] } nor a usage event'] };
  if (raw.length === 0) return { events: [], problems: ['the batch holds no usage events'] };
  const events: UsageEvent[] = [];
  const problems: string[] = [];
  raw.forEach((item, i) => {
    const parsed = parseUsageEvent(item);
    if (parsed.event) {
      events.push(parsed.event);
      return;
    }
    const eventId = claimedEventId(item);
    problems.push(`event ${i}${eventId === null ? '' : ` (id ${eventId})`} not written: ${parsed.problem}`);
  });
  return { events, problems };
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
