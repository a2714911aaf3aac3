import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { cloneDatabase, databaseUrl, dropDatabase, uniqueName } from './test-database';

/** One test file's own database and Redis key prefix, so files run in parallel and never touch demo data. */
export interface TestEnv {
  /** Environment variables as a process would read them. */
  vars: Record<string, string>;
  databaseName: string;
  redisUrl: string;
  redisPrefix: string;
  adminToken: string;
  cleanup(): Promise<void>;
}

/** Tests' upstream and webhook fixtures listen on loopback: allowed by default, overridable per platform. */
export const TEST_OUTBOUND_ALLOW_CIDRS = '127.0.0.0/8,::1/128';

export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
}

export async function createTestEnv(overrides: Record<string, string> = {}): Promise<TestEnv> {
  const databaseName = await cloneDatabase(inject('templateDatabase'));
  const redisPrefix = uniqueName('tgtest');
  const adminToken = `tg-test-admin-${randomBytes(16).toString('hex')}`;
  const vars: Record<string, string> = {
    DATABASE_URL: databaseUrl(databaseName),
    REDIS_URL: testRedisUrl(),
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
    OUTBOUND_ALLOW_CIDRS: TEST_OUTBOUND_ALLOW_CIDRS,
    ...overrides,
  };
  return {
    vars,
    databaseName,
    redisUrl: vars.REDIS_URL,
    redisPrefix,
    adminToken,
    async cleanup() {
      await dropDatabase(databaseName);
      await deleteRedisKeys(vars.REDIS_URL, redisPrefix);
    },
  };
}

export async function deleteRedisKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    await redis.quit();
  }
}
