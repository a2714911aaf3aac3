import { randomUUID } from 'node:crypto';
import type { BaseConfig, EdgeConfig } from '@tollgate/config';
import { systemClock } from '@tollgate/kernel';
import { RedisService } from '@tollgate/redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HostileInputAllowance } from './hostile-input-allowance.service';

/** Two edges (each its own Redis connections and memory) of one deployment, on real Redis. */
describe('HostileInputAllowance across edges', () => {
  const prefix = `tgtest:${randomUUID()}`;
  const redisServices: RedisService[] = [];

  const edge = async (refusedInputAllowance: number): Promise<HostileInputAllowance> => {
    const redis = new RedisService({
      redis: {
        url: '',
        prefix,
        topology: { kind: 'standalone', url: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' },
        completionWait: { replicas: 0, timeoutMs: 1 },
      },
    } as unknown as BaseConfig);
    redisServices.push(redis);
    const allowance = new HostileInputAllowance({ edge: { refusedInputAllowance } } as EdgeConfig, redis, systemClock);
    await allowance.onModuleInit();
    return allowance;
  };

  let a: HostileInputAllowance;
  let b: HostileInputAllowance;

  beforeAll(async () => {
    a = await edge(3);
    b = await edge(3);
  });

  afterAll(async () => {
    await Promise.all(redisServices.map((r) => r.onApplicationShutdown()));
  });

  it('should refuse a key on every edge once its refusals on all edges together reach the allowance', async () => {
    const key = randomUUID();
    await a.recordRefusal(key);
    await a.recordRefusal(key);
    // Two refusals: within the allowance of 3 on either edge.
    expect(a.blockedForMs(key)).toBe(0);
    expect(b.blockedForMs(key)).toBe(0);
    await b.recordRefusal(key);
    // Edge b counted the third: it refuses the key at once, edge a as soon as b's message arrives.
    expect(b.blockedForMs(key)).toBeGreaterThan(9_000);
    await vi.waitFor(() => expect(a.blockedForMs(key)).toBeGreaterThan(9_000));
    // Another key is not held back.
    expect(a.blockedForMs(randomUUID())).toBe(0);
  });

  it('should not hold back a key whose refusals stay within the allowance on all edges together', async () => {
    const key = randomUUID();
    await a.recordRefusal(key);
    await b.recordRefusal(key);
    expect(a.blockedForMs(key)).toBe(0);
    expect(b.blockedForMs(key)).toBe(0);
  });

  it('should never refuse a key, nor write to Redis, when the allowance is 0 (throttle off)', async () => {
    const off = await edge(0);
    const key = randomUUID();
    for (let i = 0; i < 20; i++) await off.recordRefusal(key);
    expect(off.blockedForMs(key)).toBe(0);
    expect(await redisServices[0].client.exists(`${prefix}:refused-input:${key}`)).toBe(0);
  });
});
