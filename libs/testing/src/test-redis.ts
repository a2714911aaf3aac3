import { parseHostPorts, RedisConfig } from '@tollgate/config';
import { bullPrefix } from '@tollgate/queue';
import { bullConnection, createRedisClient, RedisClient, RedisClientOptions, scanTargets } from '@tollgate/redis';
import { Cluster } from 'ioredis';
import { inject } from 'vitest';

/** A Redis to talk to in a test: a standalone URL, or a deployment's settings (cluster, Sentinel). */
export type RedisTarget = string | RedisConfig;

/** Which Redis a test platform runs on: the shared standalone server or the run's Redis Cluster. */
export type TestRedisMode = 'standalone' | 'cluster';

/** Both modes, for `describe.each(TEST_REDIS_MODES)` over the money-path tests. */
export const TEST_REDIS_MODES: TestRedisMode[] = ['standalone', 'cluster'];

export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
}

/** The run's Redis Cluster seed nodes (test/global-setup.ts starts it or takes TEST_REDIS_CLUSTER_NODES). */
export function testRedisClusterNodes(): string {
  return inject('redisClusterNodes');
}

export function redisConfigOf(target: RedisTarget, prefix = ''): RedisConfig {
  if (typeof target !== 'string') return target;
  return {
    url: target,
    prefix,
    topology: { kind: 'standalone', url: target },
    completionWait: { replicas: 0, timeoutMs: 1 },
  };
}

/** The shared standalone Redis or the run's Redis Cluster, as a deployment's settings with this prefix. */
export function testRedisTarget(mode: TestRedisMode, prefix: string): RedisConfig {
  const standalone = redisConfigOf(testRedisUrl(), prefix);
  if (mode === 'standalone') return standalone;
  return {
    ...standalone,
    url: '',
    topology: { kind: 'cluster', nodes: parseHostPorts('REDIS_CLUSTER_NODES', testRedisClusterNodes()) },
  };
}

/** A client of the target built by the production factory (close it with `quit()`). */
export function testRedisClient(target: RedisTarget, options: RedisClientOptions = {}): RedisClient {
  return createRedisClient(redisConfigOf(target), options);
}

/** Connection and prefix for a BullMQ Queue/QueueEvents of a test; `close()` after closing those. */
export function testBullOptions(target: RedisTarget, prefix: string) {
  const connection = bullConnection(redisConfigOf(target));
  return {
    connection,
    prefix: bullPrefix(prefix),
    async close() {
      if (connection instanceof Cluster) await connection.quit().catch(() => undefined);
    },
  };
}

/** Deletes every key of a prefix (on a cluster, on every master). */
export async function deleteRedisKeys(target: RedisTarget, prefix: string): Promise<void> {
  const redis = testRedisClient(target);
  try {
    const nodes = await scanTargets(redis);
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        // One key per UNLINK on a cluster: keys of different slots cannot share a command.
        if (keys.length > 0) await Promise.all(keys.map((k) => node.unlink(k)));
      } while (cursor !== '0');
    }
  } finally {
    await redis.quit();
  }
}
