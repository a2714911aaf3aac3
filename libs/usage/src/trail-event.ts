import { TRAIL_KINDS, TrailKind, TrailMode } from '@tollgate/kernel';
import { TRAIL_ENTRY_FIELD } from './outbox-streams';
import { z } from 'zod';
import { entryJson } from './outbox-fields';
import { jsonbText } from './jsonb-text';

/**
 * METADATA: what an operator needs to follow an agent (what it asked the catalog, what came back by
 * name, sizes, versions, calls with their ledger ids, lines and codes) and none of the tenant's data
 * (tool arguments and results, script text, logs). FULL adds those, scrubbed of secrets. METADATA is
 * the default: a trail is what makes an agent's choices explainable, and it holds nothing an org
 * must opt in to keep.
 */
export const DEFAULT_TRAIL_MODE: TrailMode = 'METADATA';
export const DEFAULT_TRAIL_RETENTION_DAYS = 30;

/** One step of an agent's trail. */
export interface TrailEvent {
  /** Sorts in recording order on one edge (time, then a counter): ties of one millisecond keep their order. */
  id: string;
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
  /** The MCP session (Mcp-Session-Id); null for a request made without one. */
  sessionId: string | null;
  kind: TrailKind;
  /** The tool (meta-tool or governed tool), resource URI or prompt the step named. */
  name: string;
  /** The disclosure catalog version the answer was rendered from; null for calls and reads. */
  catalogVersion: string | null;
  /** Tokens (o200k_base) of the answer the agent received. */
  tokens: number;
  ok: boolean;
  /** The error code when not ok. */
  code: string | null;
  /** The governed call's id (its ledger row), for calls, reads and gets. */
  callId: string | null;
  /** What the step cost (a script: all its calls), integer micro-units; null when it is not charged. */
  costMicros: number | null;
  /** Metadata: query, names and paths returned, a script's inner calls and failing line. Never tenant data. */
  detail: Record<string, unknown>;
  /** FULL mode only: arguments, the answer's text, the script, scrubbed of anything secret-looking. */
  content: Record<string, unknown> | null;
  occurredAt: Date;
}

export interface TrailEventPayload extends Omit<TrailEvent, 'occurredAt'> {
  occurredAt: string;
}

const uuid = z.string().uuid();
const int4 = z.number().int().min(0).max(2_147_483_647);
const noNul = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[^\u0000]*$/, 'must not contain NUL');
// What the table's columns take: an entry the INSERT would refuse fails here and is dead-lettered
// instead of holding back its batch.
const TRAIL_EVENT_PAYLOAD_SCHEMA = z.object({
  id: z.string().min(1).max(100),
  orgId: uuid,
  teamId: uuid,
  userId: uuid,
  keyId: uuid,
  sessionId: noNul(200).nullable(),
  kind: z.enum(TRAIL_KINDS),
  name: noNul(2_000),
  catalogVersion: z
    .string()
    .regex(/^[0-9a-f]{1,64}$/)
    .nullable(),
  tokens: int4,
  ok: z.boolean(),
  code: z
    .string()
    .regex(/^[A-Z][A-Z0-9_]{0,63}$/, 'must be an error code')
    .nullable(),
  callId: z.string().max(200).nullable(),
  costMicros: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable(),
  detail: z.record(z.string(), z.unknown()),
  content: z.record(z.string(), z.unknown()).nullable(),
  occurredAt: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO date-time'),
}) satisfies z.ZodType<TrailEventPayload>;

/**
 * One step as JSON, as it goes in a trail entry, in the form Postgres jsonb takes (see jsonbText). A
 * step's time as a Date serialises as its ISO string (Date#toJSON), so a step and its payload form
 * give the same JSON; an edge builds the payload form (TrailRecorder), with no Date to convert.
 */
export function trailStepJson(step: TrailEvent | TrailEventPayload): string {
  return jsonbText(step);
}

/** The fields of a usage outbox entry for steps already in JSON (trailStepJson): one JSON array. */
export function trailEntryOfJson(steps: readonly string[]): [string, string] {
  return [TRAIL_ENTRY_FIELD, `[${steps.join(',')}]`];
}

/**
 * The fields of a usage outbox entry for trail steps: a JSON array of them, so an edge sends the
 * steps of a moment in one XADD (a single step, as an object, is read too).
 */
export function trailEntryFields(events: TrailEvent | TrailEvent[]): [string, string] {
  if (!Array.isArray(events)) return [TRAIL_ENTRY_FIELD, trailStepJson(events)];
  return trailEntryOfJson(events.map(trailStepJson));
}

/** A trail entry read back: its valid steps, and why the others cannot be written (null: all valid). */
export interface ParsedTrailEntry {
  trail: TrailEvent[];
  problem: string | null;
  /** The id of the first step that cannot be written, when it names one. */
  trailId: string | null;
}

/** Decodes and validates an outbox entry that carries trail steps; null for one that does not. */
export function parseTrailEntry(fields: readonly string[]): ParsedTrailEntry | null {
  const read = entryJson(fields, TRAIL_ENTRY_FIELD);
  if (read.absent) return null;
  if ('problem' in read) return { trail: [], problem: read.problem, trailId: null };
  const items = Array.isArray(read.json) ? read.json : [read.json];
  const trail: TrailEvent[] = [];
  const problems: string[] = [];
  let trailId: string | null = null;
  for (const item of items) {
    const parsed = TRAIL_EVENT_PAYLOAD_SCHEMA.safeParse(item);
    if (parsed.success) {
      trail.push({ ...parsed.data, occurredAt: new Date(parsed.data.occurredAt) });
      continue;
    }
    const claimed = (item as { id?: unknown } | null)?.id;
    trailId ??= typeof claimed === 'string' ? claimed : null;
    problems.push(parsed.error.issues.map((i) => `${i.path.join('.') || 'trail'} ${i.message}`).join(', '));
  }
  return { trail, problem: problems.length ? problems.join('; ') : null, trailId };
}
