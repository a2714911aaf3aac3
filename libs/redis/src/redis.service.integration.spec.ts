import { randomUUID } from 'node:crypto';
import { loadEdgeConfig } from '@tollgate/config';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisService } from './redis.service';

describe('RedisService.evalScript on real Redis', () => {
  let env: TestEnv;
  let redis: RedisService;

  beforeAll(async () => {
    env = await createTestEnv();
    redis = new RedisService(loadEdgeConfig(env.vars));
  });

  afterAll(async () => {
    await redis?.onApplicationShutdown();
    await env?.cleanup();
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
    await expect(redis.evalScript(`-- ${randomUUID()}\nreturn redis.call('NOSUCHCOMMAND')`, [], [])).rejects.toThrow(/Unknown Redis command|unknown command/i);
  });
});
