/**
 * Tenant keys live in a fixed number of virtual shards, each a Redis Cluster hash tag (`{s<n>}`).
 * An organisation is hashed to one shard, so every key one script touches for it (budget counters,
 * reservations, rate-limit windows, its shard's epoch, completion bookkeeping and usage outbox)
 * shares one slot, and the usage outbox is one stream per shard rather than one per organisation.
 * Like queue names this is part of the data in Redis: never change REDIS_SHARDS or shardOf.
 */
export const REDIS_SHARDS = 16;

/** The shard of an organisation: FNV-1a (32 bit) of its id, modulo REDIS_SHARDS. */
export function shardOf(orgId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < orgId.length; i++) {
    h ^= orgId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % REDIS_SHARDS;
}

/** Every shard number, 0 .. REDIS_SHARDS - 1. */
export const ALL_SHARDS: readonly number[] = Array.from({ length: REDIS_SHARDS }, (_, i) => i);

/** The start of every key of a shard: `<prefix>:{s<n>}`. */
export function shardKey(prefix: string, shard: number, ...parts: string[]): string {
  return [prefix, `{s${shard}}`, ...parts].join(':');
}

/** A tenant key: `<prefix>:{s<n>}:org:<id>:...`, in the organisation's shard. */
export function orgKeyOf(prefix: string, orgId: string, ...parts: string[]): string {
  let head = ORG_KEY_HEADS.get(prefix)?.get(orgId);
  if (head === undefined) {
    head = shardKey(prefix, shardOf(orgId), 'org', orgId);
    let heads = ORG_KEY_HEADS.get(prefix);
    if (!heads) ORG_KEY_HEADS.set(prefix, (heads = new Map()));
    if (heads.size >= MAX_ORG_KEY_HEADS) heads.clear();
    heads.set(orgId, head);
  }
  let key = head;
  for (const part of parts) key += `:${part}`;
  return key;
}

// An edge builds a dozen of an organisation's keys per call (budgets, reservations, rate limits):
// its key head (shard hash and all) is made once per organisation, not once per key.
const ORG_KEY_HEADS = new Map<string, Map<string, string>>();
const MAX_ORG_KEY_HEADS = 10_000;
