import { randomUUID } from 'node:crypto';
import type { BaseConfig } from '@tollgate/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisService } from './redis.service';

describe('RedisService.evalScript on real Redis', () => {
  let redis: RedisService;

  beforeAll(() => {
    // Only the Redis settings matter here (the testing library depends on this one, so no test env).
    const config = {
      redis: { url: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', prefix: `tgtest:${randomUUID()}` },
    } as BaseConfig;
    redis = new RedisService(config);
  });

  afterAll(async () => {
    await redis?.onApplicationShutdown();
  });

  it('should run a script Redis has never seen (loading it once) and then by its SHA alone', async () => {
    // A script no one has loaded: the comment makes its SHA new.
    const source = `-- ${randomUUID()}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`;
    const key = redis.key('eval-test', randomUUID());
    expect(await redis.evalScript(source, [key], [2])).toBe(2);
    expect(await redis.evalScript(source, [key], [3])).toBe(5);
    await redis.client.del(key);
  });

  it('should pass a script error through', async () => {
    await expect(redis.evalScript(`-- ${randomUUID()}\nreturn redis.call('NOSUCHCOMMAND')`, [], [])).rejects.toThrow(
      /Unknown Redis command|unknown command/i,
    );
  });
});
