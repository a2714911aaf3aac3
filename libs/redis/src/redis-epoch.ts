import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * The deployment's Redis epoch: a random id the worker sets once Redis holds the deployment's
 * state (budget counters rebuilt from the ledger, job schedulers in place). If Redis loses its data
 * (a restart without persistence, FLUSHALL, a failover to an empty replica) the key goes with it:
 * edges refuse calls while it is missing, and the worker rebuilds and sets it again.
 */
export function redisEpochKey(prefix: string): string {
  return `${prefix}:epoch`;
}

/** The current epoch, or null when Redis lost it (or it was never set). */
export async function readRedisEpoch(client: Redis, prefix: string): Promise<string | null> {
  return client.get(redisEpochKey(prefix));
}

/** Sets a new epoch unless one is there; returns the epoch in force afterwards. */
export async function ensureRedisEpoch(client: Redis, prefix: string): Promise<string> {
  const key = redisEpochKey(prefix);
  const fresh = randomUUID();
  // SET NX ... GET: one round trip, and a concurrent setter's epoch wins.
  const previous = await client.set(key, fresh, 'NX', 'GET');
  return previous ?? fresh;
}
