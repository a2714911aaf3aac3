import { randomFillSync } from 'node:crypto';
import { Micros } from '@tollgate/kernel';
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

/**
 * A usage event as it travels through the usage outbox: money as a decimal string of micro-units,
 * the time as an ISO string. Its `traceparent` lets the worker's ledger write join the call's trace;
 * entries written before it have none.
 */
export interface UsageEventPayload extends Omit<UsageEvent, 'costMicros' | 'occurredAt'> {
  costMicros: string;
  occurredAt: string;
}

/**
 * A fresh idempotency key for one governed call: ledger row id and reservation id. A UUID version
 * 7 (RFC 9562): the time in milliseconds (`at`, now by default) in its first 48 bits, then 74
 * random bits. Ids made one after the other sort one after the other (the ledger's key compares
 * them byte by byte, COLLATE "C"), so the ledger's primary key grows at its right edge instead of
 * at a random page of the whole index for every row (random version 4 ids), which cost Postgres
 * about 3 us of CPU an event written.
 */
export function newCallId(at = Date.now()): string {
  if (idPoolOffset === ID_POOL.length) {
    randomFillSync(ID_POOL);
    idPoolOffset = 0;
  }
  const b = ID_POOL.subarray(idPoolOffset, (idPoolOffset += 16));
  b.writeUIntBE(at, 0, 6);
  b[6] = (b[6] & 0x0f) | 0x70;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// Random bytes for 256 ids at a time (as crypto.randomUUID keeps its own).
const ID_POOL = Buffer.alloc(16 * 256);
let idPoolOffset = ID_POOL.length;

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
export const USAGE_EVENT_PAYLOAD_SCHEMA = z.object({
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

/**
 * Validates one usage event payload (as an edge recorded it) against the payload schema. A payload
 * that passes `validUsageEvent` (the schema's checks written out) is taken without zod, which cost the
 * worker ~25 us of CPU an entry under load (most of its parsing time); any other goes through the
 * schema, which decides and says why.
 */
export function parseUsageEvent(item: unknown): ParsedUsageEvent {
  const valid = validUsageEvent(item);
  if (valid) return { event: valid };
  const parsed = USAGE_EVENT_PAYLOAD_SCHEMA.safeParse(item);
  if (parsed.success) return { event: fromPayload(parsed.data) };
  return {
    problem: parsed.error.issues.map((issue) => `${issue.path.join('.') || 'event'} ${issue.message}`).join(', '),
  };
}

const COST = /^-?\d{1,18}$/;
const OUTCOMES: readonly unknown[] = ['OK', 'TOOL_ERROR', 'UPSTREAM_ERROR'];
const isInt4 = (v: unknown, min = -2_147_483_648) =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= 2_147_483_647;

/**
 * What zod's uuid pattern (z.string().uuid()) accepts: 8-4-4-4-12 hex digits of either case. A loop
 * over the characters: the worker checks six of these an event, and the regular expression took
 * about twice as long.
 */
function isUuid(v: unknown): v is string {
  if (typeof v !== 'string' || v.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = v.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return false;
    } else if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46))) return false;
  }
  return true;
}

/**
 * The event USAGE_EVENT_PAYLOAD_SCHEMA would give (its keys only, a malformed traceparent as null)
 * when the payload passes every check of the schema; null otherwise (the schema then decides). Built
 * as one object straight from the parsed JSON: the worker decodes every entry of the outbox, and
 * each object less is garbage less (collection was a third of its CPU in the drain).
 * usage-event.spec.ts compares both on valid and invalid payloads.
 */
export function validUsageEvent(item: unknown): UsageEvent | null {
  if (!isRecord(item)) return null;
  const p = item as Record<keyof UsageEventPayload, unknown>;
  if (
    !(typeof p.id === 'string' && p.id.length >= 1) ||
    !isUuid(p.orgId) ||
    !isUuid(p.teamId) ||
    !isUuid(p.userId) ||
    !isUuid(p.keyId) ||
    !isUuid(p.upstreamId) ||
    !(typeof p.toolName === 'string' && p.toolName.length >= 1) ||
    !OUTCOMES.includes(p.outcome) ||
    !(typeof p.costMicros === 'string' && COST.test(p.costMicros)) ||
    !isInt4(p.inputTokens, 0) ||
    !isInt4(p.outputTokens, 0) ||
    !isInt4(p.latencyMs) ||
    !(p.priceRuleId === null || isUuid(p.priceRuleId)) ||
    typeof p.occurredAt !== 'string'
  )
    return null;
  const occurredAt = new Date(p.occurredAt);
  if (Number.isNaN(occurredAt.getTime())) return null;
  const event: UsageEvent = {
    id: p.id,
    orgId: p.orgId,
    teamId: p.teamId,
    userId: p.userId,
    keyId: p.keyId,
    upstreamId: p.upstreamId,
    toolName: p.toolName,
    outcome: p.outcome as UsageEvent['outcome'],
    costMicros: BigInt(p.costMicros),
    inputTokens: p.inputTokens as number,
    outputTokens: p.outputTokens as number,
    latencyMs: p.latencyMs as number,
    priceRuleId: p.priceRuleId,
    occurredAt,
  };
  // Optional (kept absent when absent); one that is not a valid trace context is dropped, as the schema's catch(null).
  if ('traceparent' in p)
    event.traceparent =
      p.traceparent === undefined || (typeof p.traceparent === 'string' && TRACEPARENT.test(p.traceparent))
        ? (p.traceparent as string | undefined)
        : null;
  return event;
}

/** The id an event claims to have, for log lines and dead letters; null when it names none. */
export function claimedEventId(item: unknown): string | null {
  return isRecord(item) && typeof item.id === 'string' ? item.id : null;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
