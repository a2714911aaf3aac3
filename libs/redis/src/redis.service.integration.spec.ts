import { randomUUID } from 'node:crypto';
import { parseHostPorts, type BaseConfig, type RedisTopology } from '@tollgate/config';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { luaScript, replyInt, ScriptCodec } from './lua-script';
import { RedisService } from './redis.service';

// Only the Redis settings matter here (the testing library depends on this one, so no test env).
const TOPOLOGIES: [string, () => RedisTopology][] = [
  ['standalone Redis', () => ({ kind: 'standalone', url: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' })],
  ['a Redis Cluster', () => ({ kind: 'cluster', nodes: parseHostPorts('cluster', inject('redisClusterNodes')) })],
];

describe.each(TOPOLOGIES)('RedisService on %s', (_name, topology) => {
  let redis: RedisService;

  beforeAll(() => {
    const config = {
      redis: {
        url: '',
        prefix: `tgtest:${randomUUID()}`,
        topology: topology(),
        completionWait: { replicas: 0, timeoutMs: 1 },
      },
    } as unknown as BaseConfig;
    redis = new RedisService(config);
  });

  afterAll(async () => {
    await redis?.onApplicationShutdown();
  });

  /** A script no one has loaded: the comment makes its SHA new. */
  function freshScript(body: string): ScriptCodec<{ key: string; by: number }, number> {
    return {
      script: luaScript('test', `-- ${randomUUID()}`, body),
      encode: (i) => ({ keys: [i.key], args: [i.by] }),
      decode: (reply) => replyInt(reply),
    };
  }

  it('should run a script Redis has never seen (loading it once) and then by its SHA alone', async () => {
    const incr = freshScript("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    const key = redis.key('eval-test', randomUUID());
    expect(await redis.run(incr, { key, by: 2 })).toBe(2);
    expect(await redis.run(incr, { key, by: 3 })).toBe(5);
    await redis.client.del(key);
  });

  it('should pass a script error through', async () => {
    const key = redis.key('eval-error');
    await expect(redis.run(freshScript("return redis.call('NOSUCHCOMMAND')"), { key, by: 0 })).rejects.toThrow(
      /Unknown Redis command|unknown command/i,
    );
  });

  it('should deliver a published message to a subscriber', async () => {
    let deliver: (message: string) => void = () => undefined;
    const got = new Promise<string>((resolve) => (deliver = resolve));
    // Resolves once Redis confirmed the subscription, so the publish below cannot come first.
    await redis.subscribe('test-channel', (message) => deliver(message));
    await redis.publish('test-channel', 'hello');
    expect(await got).toBe('hello');
  });
});
