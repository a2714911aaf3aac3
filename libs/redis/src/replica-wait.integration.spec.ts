import { createHash, randomUUID } from 'node:crypto';
import { parseHostPorts, type RedisConfig } from '@tollgate/config';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRedisClient, RedisClient } from './redis-client.factory';
import { evalWithReplicaWait } from './replica-wait';

const source = `-- replica-wait test ${randomUUID()}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`;
const script = { source, sha: createHash('sha1').update(source).digest('hex') };

function config(topology: RedisConfig['topology']): RedisConfig {
  return { url: '', prefix: 'tgtest', topology, completionWait: { replicas: 0, timeoutMs: 1 } };
}

describe('evalWithReplicaWait', () => {
  let cluster: RedisClient;
  let standalone: RedisClient;

  beforeAll(() => {
    cluster = createRedisClient(
      config({ kind: 'cluster', nodes: parseHostPorts('cluster', inject('redisClusterNodes')) }),
    );
    standalone = createRedisClient(
      config({ kind: 'standalone', url: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' }),
    );
  });

  afterAll(async () => {
    await Promise.allSettled([cluster?.quit(), standalone?.quit()]);
  });

  it('should run the script (sending its source once) and count the replica of the node that ran it, on every slot of a cluster', async () => {
    // Keys on many slots, so every master (each with one replica) runs the script at least once.
    for (let i = 0; i < 30; i++) {
      const key = `tgtest:{wait-${randomUUID()}}:n`;
      const answer = await evalWithReplicaWait(cluster, script, [key], [2], { replicas: 1, timeoutMs: 2000 });
      expect(answer).toEqual({ result: 2, replicas: 1 });
      await cluster.del(key);
    }
  });

  it('should answer 0 replicas after the timeout where there are none, with the script applied', async () => {
    const key = `tgtest:wait:${randomUUID()}`;
    const started = Date.now();
    const answer = await evalWithReplicaWait(standalone, script, [key], [5], { replicas: 1, timeoutMs: 50 });
    expect(answer).toEqual({ result: 5, replicas: 0 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(await standalone.get(key)).toBe('5');
    await standalone.del(key);
  });

  it('should not wait at all when no replica is asked for', async () => {
    const key = `tgtest:wait:${randomUUID()}`;
    expect(await evalWithReplicaWait(standalone, script, [key], [1], null)).toEqual({ result: 1, replicas: null });
    await standalone.del(key);
  });
});
