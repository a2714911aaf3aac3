// Here, not beside the lib: it needs the test environment (libs/testing), which depends on libs that use
// observability (libs/usage's ledger spans), so a spec inside the lib would make a project cycle.
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientLatencyMetrics, redisFamily, sqlOperation } from '@tollgate/observability';

/** The histogram's observation count per label set, as a scrape would show it. */
async function counts(registry: Registry, name: string): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name)!;
  const out: Record<string, number> = {};
  for (const v of metric.values as { metricName?: string; labels: Record<string, string>; value: number }[]) {
    if (v.metricName !== `${name}_count`) continue;
    out[Object.values(v.labels).join('/')] = v.value;
  }
  return out;
}

describe('client latency metrics on real Redis and Postgres', () => {
  let env: TestEnv;
  let redis: Redis;
  let pool: Pool;
  const registry = new Registry();

  beforeAll(async () => {
    env = await createTestEnv();
    redis = new Redis(env.redisUrl, { enableAutoPipelining: true });
    pool = new Pool({ connectionString: env.vars.DATABASE_URL, max: 2 });
    // As the apps' pools do (PrismaService): an idle connection's error (here the database dropped at
    // cleanup while the pool still closes a connection) is the pool's to handle, not an uncaught throw.
    pool.on('error', () => undefined);
    new ClientLatencyMetrics(registry).watch(redis, [pool, pool]);
  });

  afterAll(async () => {
    await redis?.quit();
    await pool?.end();
    await env?.cleanup();
  });

  it('should time each Redis command once by family and outcome, and leave blocking reads out', async () => {
    const key = `${env.redisPrefix}:latency`;
    await Promise.all([redis.set(key, '1'), redis.get(key), redis.get(key)]);
    await redis.eval('return 1', 0);
    await redis.xadd(`${key}:s`, '*', 'f', 'v');
    await redis.xread('BLOCK', 10, 'STREAMS', `${key}:none`, '$');
    await redis.multi().incr(key).exec();
    await redis.publish(`${key}:c`, 'x');
    await expect(redis.incr(`${key}:s`)).rejects.toThrow(/WRONGTYPE/);

    expect(await counts(registry, 'tollgate_redis_command_duration_seconds')).toMatchObject({
      'write/ok': 2, // SET, INCR in the transaction
      'read/ok': 2,
      'script/ok': 1,
      'stream/ok': 1, // XADD; the blocking XREAD is not timed
      'transaction/ok': 2, // MULTI, EXEC
      'pubsub/ok': 1,
      'write/error': 1,
    });
  });

  it('should time Postgres queries by operation, promise and callback alike, across the pool', async () => {
    await pool.query('SELECT 1');
    await pool.query({ text: '  insert into "_prisma_migrations" select * from "_prisma_migrations" where false' });
    await new Promise<void>((resolve, reject) => pool.query('SELECT 2', (err) => (err ? reject(err) : resolve())));
    const client = await pool.connect();
    await client.query('BEGIN');
    await client.query('COMMIT');
    client.release();
    await expect(pool.query('SELECT * FROM no_such_table')).rejects.toThrow();

    expect(await counts(registry, 'tollgate_postgres_query_duration_seconds')).toMatchObject({
      'SELECT/ok': 2,
      'INSERT/ok': 1,
      'BEGIN/ok': 1,
      'COMMIT/ok': 1,
      'SELECT/error': 1,
    });
  });

  it('should keep the label values few', () => {
    expect(redisFamily({ name: 'XREADGROUP', args: ['GROUP', 'g', 'c', 'STREAMS', 's', '>'] })).toBe('stream');
    expect(redisFamily({ name: 'bzpopmin', args: ['k', 1] })).toBeNull();
    expect(redisFamily({ name: 'evalsha', args: [] })).toBe('script');
    expect(redisFamily({ name: 'no-such-command', args: [] })).toBe('other');
    expect(sqlOperation('with x as (select 1) select * from x')).toBe('WITH');
    expect(sqlOperation('VACUUM')).toBe('OTHER');
    expect(sqlOperation(undefined)).toBe('OTHER');
  });
});
