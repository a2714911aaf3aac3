import { USAGE_ENTRY_FIELD } from '@tollgate/queue';
import { claimedEventId, parseUsageEvent, ParsedUsageEvent, toPayload, UsageEvent } from './usage-event';

/** The fields of a usage outbox entry for one event (see `usageOutboxKeys` in `@tollgate/queue`). */
export function usageEntryFields(event: UsageEvent): [string, string] {
  return [USAGE_ENTRY_FIELD, JSON.stringify(toPayload(event))];
}

/** An outbox entry read back: the event, or why it cannot be written; `eventId` when it names one. */
export type ParsedUsageEntry = ParsedUsageEvent & { eventId: string | null };

/**
 * Decodes and validates one outbox entry (its field list as XREADGROUP returns it) with the same
 * schema as queued usage jobs.
 */
export function parseUsageEntry(fields: readonly string[]): ParsedUsageEntry {
  const i = fields.findIndex((f, n) => n % 2 === 0 && f === USAGE_ENTRY_FIELD);
  if (i < 0) return { problem: `the entry has no "${USAGE_ENTRY_FIELD}" field`, eventId: null };
  let payload: unknown;
  try {
    payload = JSON.parse(fields[i + 1]);
  } catch (err) {
    return { problem: `the "${USAGE_ENTRY_FIELD}" field is not JSON: ${(err as Error).message}`, eventId: null };
  }
  return { ...parseUsageEvent(payload), eventId: claimedEventId(payload) };
}
