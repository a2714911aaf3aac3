import { REFUSAL_ENTRY_FIELD } from './outbox-streams';
import { z } from 'zod';
import { entryJson } from './outbox-fields';

/**
 * A governed call the edge refused before (or instead of) answering it with a result: policy,
 * rate limit, budget, arguments, unknown tool. `calls` is 1 for a refusal logged on its own; more
 * for a row standing for refusals of one key, tool and code the edge did not log one by one (over
 * REFUSALS_LOGGED_PER_KEY_MINUTE), so the counts stay exact while the rows stay bounded.
 */
export interface RefusedCall {
  id: string;
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
  /** Null when the tool named is not in the catalog (UNKNOWN_TOOL) or was refused before the lookup. */
  upstreamId: string | null;
  /** The tool's own name when known, else the name the agent called. */
  toolName: string;
  /** The refusal's code, as the agent saw it in `_meta["tollgate/error"].code`. */
  code: string;
  /** The budget that refused the call (BUDGET_EXCEEDED), else null. */
  budgetId: string | null;
  calls: number;
  latencyMs: number;
  occurredAt: Date;
}

/** How a refused call travels in the usage outbox (JSON in the entry's REFUSAL_ENTRY_FIELD). */
export interface RefusedCallPayload extends Omit<RefusedCall, 'occurredAt'> {
  occurredAt: string;
}

const uuid = z.string().uuid();
const int4 = z.number().int().min(-2_147_483_648).max(2_147_483_647);
// Exactly what the table's columns take: an entry the INSERT would refuse must fail here, or it
// would hold back its whole batch.
const REFUSED_CALL_PAYLOAD_SCHEMA = z.object({
  id: z.string().min(1).max(200),
  orgId: uuid,
  teamId: uuid,
  userId: uuid,
  keyId: uuid,
  upstreamId: uuid.nullable(),
  toolName: z
    .string()
    .min(1)
    .max(500)
    .regex(/^[^\u0000]*$/, 'must not contain NUL'),
  code: z.string().regex(/^[A-Z][A-Z0-9_]{0,63}$/, 'must be an error code'),
  budgetId: uuid.nullable(),
  calls: int4.min(1),
  latencyMs: int4,
  occurredAt: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO date-time'),
}) satisfies z.ZodType<RefusedCallPayload>;

/** The fields of a usage outbox entry for one refused call. */
export function refusalEntryFields(refusal: RefusedCall): [string, string] {
  const payload: RefusedCallPayload = { ...refusal, occurredAt: refusal.occurredAt.toISOString() };
  return [REFUSAL_ENTRY_FIELD, JSON.stringify(payload)];
}

/** A refusal entry read back: the refusal, or why it cannot be written; `refusalId` when it names one. */
export type ParsedRefusalEntry =
  | { refusal: RefusedCall; problem?: never; refusalId: string }
  | { refusal?: never; problem: string; refusalId: string | null };

/**
 * Decodes and validates an outbox entry that carries a refused call; null for an entry that does
 * not (a usage event, see parseUsageEntry).
 */
export function parseRefusalEntry(fields: readonly string[]): ParsedRefusalEntry | null {
  const read = entryJson(fields, REFUSAL_ENTRY_FIELD);
  if (read.absent) return null;
  if ('problem' in read) return { problem: read.problem, refusalId: null };
  const payload = read.json;
  const parsed = REFUSED_CALL_PAYLOAD_SCHEMA.safeParse(payload);
  if (!parsed.success) {
    const claimed = (payload as { id?: unknown } | null)?.id;
    return {
      problem: parsed.error.issues.map((issue) => `${issue.path.join('.') || 'refusal'} ${issue.message}`).join(', '),
      refusalId: typeof claimed === 'string' ? claimed : null,
    };
  }
  return { refusal: { ...parsed.data, occurredAt: new Date(parsed.data.occurredAt) }, refusalId: parsed.data.id };
}
