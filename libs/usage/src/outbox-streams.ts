/**
 * The usage outbox: Redis Streams (one per virtual shard) edges append each usage event to (one
 * XADD per call) and the worker drains into the ledger with a consumer group on each. Like queue names, these names are part of
 * the data in Redis: never change a value. The entry's encoding and validation live in
 * `@tollgate/usage`.
 */
export interface UsageOutboxKeys {
  /** The stream of usage events not yet in the ledger; an entry is deleted once written. */
  events: string;
  /** Entries that are not valid usage events, with the reason (capped at USAGE_DEAD_LETTER_MAX). */
  dead: string;
}

/**
 * The outbox keys of a deployment (`REDIS_PREFIX`) for one virtual shard (`shardOf(orgId)` in
 * `@tollgate/redis`): the stream sits in the shard's hash tag (`{s<n>}`), so an edge's completion
 * script writes an organisation's settlements and usage events in one Redis Cluster slot, and the
 * worker's dead letters of a stream share its slot. Without a shard: the single stream of
 * deployments from before sharding, still drained (what an upgrade left, or an entry put by hand).
 */
export function usageOutboxKeys(prefix: string, shard?: number): UsageOutboxKeys {
  const base = shard === undefined ? prefix : `${prefix}:{s${shard}}`;
  return { events: `${base}:usage:events`, dead: `${base}:usage:dead` };
}

/** Every outbox stream the worker drains: one per shard (0 .. shards - 1), then the one from before sharding. */
export function allUsageOutboxKeys(prefix: string, shards: number): UsageOutboxKeys[] {
  return [...Array.from({ length: shards }, (_, i) => usageOutboxKeys(prefix, i)), usageOutboxKeys(prefix)];
}

/**
 * One entry to append to the usage outbox: its stream (`usageOutboxKeys(...).events`) and its one
 * field and value (USAGE_ENTRY_FIELD or REFUSAL_ENTRY_FIELD, and the payload as JSON).
 */
export interface UsageOutboxEntry {
  stream: string;
  fields: [string, string];
}

/** The consumer group the workers drain the outbox with; every worker replica joins it. */
export const USAGE_LEDGER_GROUP = 'ledger';

/** The entry field holding the usage event payload (`UsageEventPayload`) as JSON. */
export const USAGE_ENTRY_FIELD = 'e';

/**
 * The entry field holding a refused call (`RefusedCallPayload` in `@tollgate/usage`) as JSON: an
 * entry carries either this or USAGE_ENTRY_FIELD. Refusals ride the same streams and consumer group
 * as usage events and are written to their own table ("RefusedCall").
 */
export const REFUSAL_ENTRY_FIELD = 'r';

/** The dead-letter stream keeps about this many entries (the newest). */
export const USAGE_DEAD_LETTER_MAX = 10_000;

/** The pub/sub channel (a `RedisService.channel` name) the worker announces each written batch on. */
export const USAGE_LEDGER_WRITTEN_CHANNEL = 'usage-ledger-written';

/** What the worker publishes after each batch: event ids now in the ledger, and those dead-lettered. */
export interface UsageLedgerNotice {
  written: string[];
  deadLettered: string[];
  /** Ids of refused calls now in "RefusedCall" (absent from workers before refusals were recorded). */
  refused?: string[];
  /** Ids of trail events now in "TrailEvent" (absent from workers before trails were recorded). */
  trail?: string[];
}

/**
 * The entry field holding one trail event (`TrailEventPayload` in `@tollgate/usage`) as JSON:
 * what an agent was shown (a tool list, a search, a schema or stub read) or did (a call, a script),
 * recorded beside the usage events it links to and written to "TrailEvent".
 */
export const TRAIL_ENTRY_FIELD = 't';
