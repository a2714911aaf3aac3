import type { TestProject } from 'vitest/node';
import { createTemplateDatabase, dropDatabase } from '../libs/testing/src/test-database';
import { startLocalRedisCluster } from '../tools/redis-cluster/local-redis-cluster';

/**
 * Migrates one template database per test run; every test file then clones it
 * (`CREATE DATABASE ... TEMPLATE`, ~100 ms) so files run in parallel on their own data.
 *
 * The money-path tests run on a Redis Cluster as well as on standalone Redis: the cluster named
 * by TEST_REDIS_CLUSTER_NODES, else (`.ci/run` too) a 6-node cluster on loopback started
 * here for the run and stopped at its end. Test files read its seed nodes with
 * `inject('redisClusterNodes')` (through `createTestEnv({ redis: 'cluster' })`).
 */
export default async function setup(project: TestProject) {
  const given = process.env.TEST_REDIS_CLUSTER_NODES;
  const [template, cluster] = await Promise.all([
    createTemplateDatabase(),
    given ? Promise.resolve(null) : startLocalRedisCluster(),
  ]);
  project.provide('templateDatabase', template);
  project.provide('redisClusterNodes', given ?? cluster!.seeds);
  return async () => {
    await Promise.allSettled([dropDatabase(template), cluster?.stop()]);
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
    /** Seed nodes of the run's Redis Cluster, `host:port,host:port,...`. */
    redisClusterNodes: string;
  }
}
