import { createTestEnv, TestEnv } from '@tollgate/testing';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMoneyModel, SUITE_MONEY_MODEL_SEED } from '../../tools/money-model/money-commands';
import { MoneySystem } from '../../tools/money-model/money-system';
import { startTlsRedisCluster, TlsRedisCluster } from '../support/tls-redis';

/**
 * The money path through a Redis Cluster shaped like a managed one in cluster mode (ElastiCache or
 * Valkey with cluster mode on, Memorystore Cluster): TLS only on client, bus and replication links,
 * a CA of the deployment's own, an ACL user with a password and the default user off. The same
 * model-based run as money-path-model.test.ts, bounded, configured only by REDIS_CLUSTER_NODES,
 * REDIS_TLS, REDIS_TLS_CA_FILE, REDIS_USERNAME and REDIS_PASSWORD, with the opt-in replica wait.
 */
describe('the money path against its reference model on a TLS Redis Cluster with an ACL user', () => {
  let env: TestEnv;
  let cluster: TlsRedisCluster;

  beforeAll(async () => {
    env = await createTestEnv({});
    cluster = await startTlsRedisCluster();
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    await env?.cleanup();
  });

  for (const leases of [false, true]) {
    it(`should answer, count and meter every step as the model does when calls are admitted ${leases ? 'under leases' : 'one by one'}`, async () => {
      const { REDIS_URL: _standalone, ...vars } = env.vars;
      const sys = await MoneySystem.start(
        {
          ...vars,
          REDIS_CLUSTER_NODES: cluster.seeds,
          REDIS_TLS: 'true',
          REDIS_TLS_CA_FILE: cluster.caFile,
          REDIS_USERNAME: cluster.username,
          REDIS_PASSWORD: cluster.password,
        },
        { leases, completionWait: { replicas: 1, timeoutMs: 1000 } },
      );
      try {
        expect(sys.redis.client).toBeInstanceOf(Cluster);
        const ran = await runMoneyModel({
          sys,
          numRuns: 6,
          maxCommands: 40,
          seed: SUITE_MONEY_MODEL_SEED,
          timeLimitMs: 60_000,
        }).catch((err: Error) => {
          console.error(err.message);
          throw err;
        });
        console.log(`TLS cluster${leases ? ' + leases' : ''}: ${JSON.stringify(ran)}`);
        expect(ran.byCommand['admit:admitted']).toBeGreaterThan(0);
        // Every connection the masters list is the ACL user's (the default user is off).
        for (const node of (sys.redis.client as Cluster).nodes('master')) {
          const clients = String(await node.call('CLIENT', 'LIST'))
            .trim()
            .split('\n');
          expect(clients.filter((c) => !/ user=tollgate /.test(c))).toEqual([]);
        }
      } finally {
        await sys.close();
      }
    }, 180_000);
  }
});
