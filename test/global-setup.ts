import { rm } from 'node:fs/promises';
import type { TestProject } from 'vitest/node';
import { createTemplateDatabase, dropDatabase } from '../libs/testing/src/test-database';
import { startLocalRedisCluster } from '../tools/redis-cluster/local-redis-cluster';
import { buildConsole } from './support/console-build';

/**
 * Migrates one template database per test run; every test file then clones it
 * (`CREATE DATABASE ... TEMPLATE`, ~100 ms) so files run in parallel on their own data.
 *
 * The money-path tests run on a Redis Cluster as well as on standalone Redis: the cluster named
 * by TEST_REDIS_CLUSTER_NODES, else (`.ci/run` too) a 6-node cluster on loopback started
 * here for the run and stopped at its end. Test files read its seed nodes with
 * `inject('redisClusterNodes')` (through `createTestEnv({ redis: 'cluster' })`).
 *
 * The console is built once for the run, beside the rest (~3 s of CPU; each browser test file built
 * its own before), and served read-only by every browser test's admin API.
 */
export default async function setup(project: TestProject) {
  const given = process.env.TEST_REDIS_CLUSTER_NODES;
  const [template, cluster, consoleDir] = await Promise.all([
    createTemplateDatabase(),
    given ? Promise.resolve(null) : startLocalRedisCluster(),
    buildConsole(),
  ]);
  project.provide('templateDatabase', template);
  project.provide('redisClusterNodes', given ?? cluster!.seeds);
  project.provide('consoleBuildDir', consoleDir);
  return async () => {
    await Promise.allSettled([
      dropDatabase(template),
      cluster?.stop(),
      rm(consoleDir, { recursive: true, force: true }),
    ]);
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
    /** Seed nodes of the run's Redis Cluster, `host:port,host:port,...`. */
    redisClusterNodes: string;
    /** The run's production build of the console, for ADMIN_CONSOLE_DIR. */
    consoleBuildDir: string;
  }
}
