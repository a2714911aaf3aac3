import { REFUSAL_ENTRY_FIELD, TRAIL_ENTRY_FIELD, USAGE_ENTRY_FIELD } from './outbox-streams';
import { entryField, entryJson } from './outbox-fields';
import { parseRefusalEntry, RefusedCall } from './refused-call';
import { parseTrailEntry, TrailEvent } from './trail-event';
import { claimedEventId, parseUsageEvent, ParsedUsageEvent, toPayload, UsageEvent } from './usage-event';

/** The fields of a usage outbox entry for one event (see `usageOutboxKeys` in `@tollgate/queue`). */
export function usageEntryFields(event: UsageEvent): [string, string] {
  return [USAGE_ENTRY_FIELD, JSON.stringify(toPayload(event))];
}

/** An outbox entry read back: the event, or why it cannot be written; `eventId` when it names one. */
export type ParsedUsageEntry = ParsedUsageEvent & { eventId: string | null };

/**
 * Decodes and validates one usage entry (its field list as XREADGROUP returns it) with the usage
 * event's schema (`parseUsageEvent`).
 */
export function parseUsageEntry(fields: readonly string[]): ParsedUsageEntry {
  const read = entryJson(fields, USAGE_ENTRY_FIELD);
  if (read.absent) return { problem: `the entry has no "${USAGE_ENTRY_FIELD}" field`, eventId: null };
  if ('problem' in read) return { problem: read.problem, eventId: null };
  const parsed = parseUsageEvent(read.json);
  return parsed.event
    ? { event: parsed.event, eventId: parsed.event.id }
    : { problem: parsed.problem, eventId: claimedEventId(read.json) };
}

/** An outbox entry that cannot be written, as the dead-letter stream keeps it. */
export interface InvalidOutboxEntry {
  /** Why it cannot be written. */
  reason: string;
  /** The event or refused call id it claims, for log lines and the worker's notice; null when it names none. */
  claimedId: string | null;
  /** The payload's field (USAGE_ENTRY_FIELD or REFUSAL_ENTRY_FIELD) and its value as read (the whole entry without one). */
  field: string;
  payload: string;
}

/** An outbox entry read back: a usage event, a refused call, or why it is neither. */
export type ParsedOutboxEntry =
  | { event: UsageEvent; refusal?: never; trail?: never; invalid?: never }
  | { event?: never; refusal: RefusedCall; trail?: never; invalid?: never }
  | { event?: never; refusal?: never; trail: TrailEvent[]; invalid?: InvalidOutboxEntry }
  | { event?: never; refusal?: never; trail?: never; invalid: InvalidOutboxEntry };

/**
 * Decodes and validates one outbox entry of any kind: a trail event (TRAIL_ENTRY_FIELD), a refused
 * call (REFUSAL_ENTRY_FIELD), else a usage event (USAGE_ENTRY_FIELD).
 */
export function parseOutboxEntry(fields: readonly string[]): ParsedOutboxEntry {
  const trail = parseTrailEntry(fields);
  if (trail) {
    // Valid steps are written; an entry with steps that are not is also dead-lettered (whole, with the reason).
    if (trail.problem === null) return { trail: trail.trail };
    const payload = entryField(fields, TRAIL_ENTRY_FIELD) ?? '';
    const invalid = { reason: trail.problem, claimedId: trail.trailId, field: TRAIL_ENTRY_FIELD, payload };
    return { trail: trail.trail, invalid };
  }
  const refused = parseRefusalEntry(fields);
  if (refused?.refusal) return { refusal: refused.refusal };
  if (refused) {
    const payload = entryField(fields, REFUSAL_ENTRY_FIELD) ?? '';
    return { invalid: { reason: refused.problem, claimedId: refused.refusalId, field: REFUSAL_ENTRY_FIELD, payload } };
  }
  const parsed = parseUsageEntry(fields);
  if (parsed.event) return { event: parsed.event };
  const payload = entryField(fields, USAGE_ENTRY_FIELD) ?? JSON.stringify(fields);
  return { invalid: { reason: parsed.problem, claimedId: parsed.eventId, field: USAGE_ENTRY_FIELD, payload } };
}
