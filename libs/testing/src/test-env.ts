import { randomBytes } from 'node:crypto';
import { BASE_ENV_SCHEMA, parseHostPorts, RedisConfig, redisConfigFrom } from '@tollgate/config';
import { inject } from 'vitest';
import { cloneDatabase, databaseUrl, dropDatabase, uniqueName } from './test-database';
import { deleteRedisKeys, redisConfigOf, testRedisClusterNodes, TestRedisMode, testRedisUrl } from './test-redis';

/** One test file's own database and Redis key prefix, so files run in parallel and never touch demo data. */
export interface TestEnv {
  /** Environment variables as a process would read them. */
  vars: Record<string, string>;
  databaseName: string;
  /** The standalone Redis URL; empty on a cluster (use `redis`). */
  redisUrl: string;
  /** The Redis the platform runs on, as its processes are configured (pass it to the helpers). */
  redis: RedisConfig;
  redisPrefix: string;
  adminToken: string;
  cleanup(): Promise<void>;
}

/** Tests' upstream and webhook fixtures listen on loopback: allowed by default, overridable per platform. */
export const TEST_OUTBOUND_ALLOW_CIDRS = '127.0.0.0/8,::1/128';

/**
 * An ACL user, password and TLS the variables give (a managed Redis), read by the processes' own
 * parser. Variables it refuses (a test of bad settings) give none: the apps refuse them anyway.
 */
function managedRedisAccess(vars: Record<string, string>): Pick<RedisConfig, 'username' | 'password' | 'tls'> {
  const env = BASE_ENV_SCHEMA.safeParse(vars);
  if (!env.success) return {};
  const { username, password, tls } = redisConfigFrom(env.data);
  return { username, password, tls };
}

/** `redis: 'cluster'` runs the platform on the run's Redis Cluster instead of standalone Redis. */
export async function createTestEnv(
  overrides: Record<string, string> = {},
  options: { redis?: TestRedisMode } = {},
): Promise<TestEnv> {
  const onCluster = options.redis === 'cluster';
  const databaseName = await cloneDatabase(inject('templateDatabase'));
  const redisPrefix = uniqueName('tgtest');
  const adminToken = `tg-test-admin-${randomBytes(16).toString('hex')}`;
  const vars: Record<string, string> = {
    DATABASE_URL: databaseUrl(databaseName),
    ...(onCluster ? { REDIS_CLUSTER_NODES: testRedisClusterNodes() } : { REDIS_URL: testRedisUrl() }),
    REDIS_PREFIX: redisPrefix,
    KEY_HASH_SECRET: randomBytes(24).toString('hex'),
    ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    ADMIN_BOOTSTRAP_TOKEN: adminToken,
    // /metrics are served only to its bearer; a test that wants them off passes METRICS_TOKEN: ''.
    METRICS_TOKEN: `tg-test-metrics-${randomBytes(16).toString('hex')}`,
    HOST: '127.0.0.1',
    EDGE_PORT: '0',
    ADMIN_PORT: '0',
    WORKER_PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    // Two files run at once, each with up to five apps (two edges, admin API, worker) and its own
    // client; at the default 20 connections each they can reach Postgres' default 100, and a file's
    // app then fails to start with "too many clients" (seen with two runs on one machine).
    DATABASE_POOL_SIZE: '10',
    OUTBOUND_ALLOW_CIDRS: TEST_OUTBOUND_ALLOW_CIDRS,
    ...overrides,
  };
  const redis: RedisConfig = onCluster
    ? {
        ...redisConfigOf(testRedisUrl(), redisPrefix),
        url: '',
        topology: {
          kind: 'cluster',
          nodes: parseHostPorts('REDIS_CLUSTER_NODES', vars.REDIS_CLUSTER_NODES),
        },
      }
    : { ...redisConfigOf(vars.REDIS_URL, redisPrefix), ...managedRedisAccess(vars) };
  return {
    vars,
    databaseName,
    redisUrl: onCluster ? '' : vars.REDIS_URL,
    redis,
    redisPrefix,
    adminToken,
    async cleanup() {
      await dropDatabase(databaseName);
      await deleteRedisKeys(redis, redisPrefix);
    },
  };
}
