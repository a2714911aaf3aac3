import { createHash, randomUUID } from 'node:crypto';
import { parseHostPorts, type RedisConfig } from '@tollgate/config';
import { createRedisClient, evalWithReplicaWait } from '@tollgate/redis';
import { describe, expect, it } from 'vitest';
import { startLocalRedisCluster } from '../../tools/redis-cluster/local-redis-cluster';

const source = `-- replica-wait failover test ${randomUUID()}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`;
const script = { source, sha: createHash('sha1').update(source).digest('hex') };

function config(seeds: string): RedisConfig {
  return {
    url: '',
    prefix: 'tgtest',
    topology: { kind: 'cluster', nodes: parseHostPorts('seeds', seeds) },
    completionWait: { replicas: 0, timeoutMs: 1 },
  };
}

/** The opt-in completion wait (evalWithReplicaWait) across failovers of a cluster of the test's own. */
describe('a script with a replica wait on a Redis Cluster that fails over', () => {
  // Found by the money model: after a failover whose old master comes back as a replica (a planned
  // failover, or a master killed -9 and restarted), every completion with the wait answered MOVED.
  it('should follow a slot to its new master after a failover, its old master now a replica', async () => {
    const own = await startLocalRedisCluster();
    const client = createRedisClient(config(own.seeds));
    try {
      const key = `tgtest:{moved-${randomUUID()}}:n`;
      const wait = { replicas: 1, timeoutMs: 2000 };
      expect(await evalWithReplicaWait(client, script, [key], [1], wait)).toEqual({ result: 1, replicas: 1 });
      await own.plannedFailover(await own.masterPortOf(key));
      for (let n = 2; n <= 4; n++)
        expect(await evalWithReplicaWait(client, script, [key], [1], wait)).toEqual({ result: n, replicas: 1 });
      await own.killCaughtUpMaster(await own.masterPortOf(key));
      expect(await evalWithReplicaWait(client, script, [key], [1], wait)).toEqual({ result: 5, replicas: 1 });
    } finally {
      client.disconnect();
      await own.stop();
    }
  }, 120_000);
});
