import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis-client.factory';
import { ALL_SHARDS, shardKey } from './redis-shards';

/**
 * The deployment's Redis epoch: a random id the worker sets once Redis holds the deployment's
 * state (budget counters rebuilt from the ledger, job schedulers in place). If Redis loses its data
 * (a restart without persistence, FLUSHALL, a failover to an empty replica) the key goes with it:
 * edges refuse calls while it is missing, and the worker rebuilds and sets it again.
 */
export function redisEpochKey(prefix: string, shard: number): string {
  return shardKey(prefix, shard, 'epoch');
}

/**
 * The current epoch, or null when Redis lost it (or it was never set). The epoch is kept once per
 * virtual shard (in the shard's slot, beside the keys the scripts check it with): a Redis Cluster
 * master lost to an empty replica takes only its shards' epochs, and that counts as a loss too.
 */
export async function readRedisEpoch(client: RedisClient, prefix: string): Promise<string | null> {
  const all = await Promise.all(ALL_SHARDS.map((s) => client.get(redisEpochKey(prefix, s))));
  return all.every((e) => e !== null) ? all[0] : null;
}

/** Sets a new epoch on every shard that has none; returns the epoch in force afterwards (shard 0's). */
export async function ensureRedisEpoch(client: RedisClient, prefix: string): Promise<string> {
  const fresh = randomUUID();
  // SET NX ... GET: one round trip per shard, and a concurrent setter's epoch wins.
  const previous = await Promise.all(ALL_SHARDS.map((s) => client.set(redisEpochKey(prefix, s), fresh, 'NX', 'GET')));
  return previous[0] ?? fresh;
}
