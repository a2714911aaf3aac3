import { randomUUID } from 'node:crypto';
import type { BaseConfig } from '@tollgate/config';
import { RedisService } from '@tollgate/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OwnRedis, startOwnRedis } from '../support/outages';

/**
 * Pub/sub carries cache invalidations (key revoked, org changed) between apps: the subscriber
 * resubscribes itself after Redis restarts (ioredis' own resubscription is off, see RedisService),
 * so it must come back subscribed to every channel.
 */
describe('RedisService subscriber across a Redis restart (own redis-server)', () => {
  let own: OwnRedis;
  let redis: RedisService;

  const service = (url: string) =>
    new RedisService({
      redis: {
        url,
        prefix: `tgtest:${randomUUID()}`,
        topology: { kind: 'standalone', url },
        completionWait: { replicas: 0, timeoutMs: 1 },
      },
    } as unknown as BaseConfig);

  /** Resolves with the first message on `channel`, publishing until one arrives (the subscriber reconnects on its own schedule). */
  async function firstMessage(s: RedisService, channel: string, got: Promise<string>): Promise<string> {
    let done = false;
    void got.then(() => (done = true));
    while (!done) {
      await s.publish(channel, 'ping').catch(() => undefined);
      await Promise.race([got, new Promise((r) => setTimeout(r, 50))]);
    }
    return got;
  }

  beforeAll(async () => {
    own = await startOwnRedis();
    redis = service(own.url);
  });

  afterAll(async () => {
    await redis?.onApplicationShutdown();
    await own?.stop();
  });

  it('should receive on every channel it subscribed to after Redis restarts', async () => {
    const received = new Map<string, (m: string) => void>();
    const got = (channel: string) => new Promise<string>((resolve) => received.set(channel, resolve));
    await redis.subscribe('a', (m) => received.get('a')?.(m));
    await redis.subscribe('b', (m) => received.get('b')?.(m));
    await own.restart();
    const [a, b] = [got('a'), got('b')];
    expect(await firstMessage(redis, 'a', a)).toBe('ping');
    expect(await firstMessage(redis, 'b', b)).toBe('ping');
  });
});
