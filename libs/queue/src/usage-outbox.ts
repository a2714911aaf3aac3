/**
 * The usage outbox: a Redis Stream edges append each usage event to (one XADD per call) and the
 * worker drains into the ledger with a consumer group. Like queue names, these names are part of
 * the data in Redis: never change a value. The entry's encoding and validation live in
 * `@tollgate/metering`.
 */
export interface UsageOutboxKeys {
  /** The stream of usage events not yet in the ledger; an entry is deleted once written. */
  events: string;
  /** Entries that are not valid usage events, with the reason (capped at USAGE_DEAD_LETTER_MAX). */
  dead: string;
}

/** The outbox keys of a deployment (`REDIS_PREFIX`). */
export function usageOutboxKeys(prefix: string): UsageOutboxKeys {
  return { events: `${prefix}:usage:events`, dead: `${prefix}:usage:dead` };
}

/** The consumer group the workers drain the outbox with; every worker replica joins it. */
export const USAGE_LEDGER_GROUP = 'ledger';

/** The entry field holding the usage event payload (`UsageEventPayload`) as JSON. */
export const USAGE_ENTRY_FIELD = 'e';

/** The dead-letter stream keeps about this many entries (the newest). */
export const USAGE_DEAD_LETTER_MAX = 10_000;

/** The pub/sub channel (a `RedisService.channel` name) the worker announces each written batch on. */
export const USAGE_LEDGER_WRITTEN_CHANNEL = 'usage-ledger-written';

/** What the worker publishes after each batch: event ids now in the ledger, and those dead-lettered. */
export interface UsageLedgerNotice {
  written: string[];
  deadLettered: string[];
}
