import { USAGE_LEDGER_WRITTEN_CHANNEL } from '@tollgate/usage';
import { channelName, duplicateRedisClient } from '@tollgate/redis';
import { RedisTarget, testRedisClient } from './test-redis';

/**
 * Waits until `count()` reaches `atLeast`: checked once subscribed to the worker's batch notices and
 * again after every batch that wrote trail steps (no polling on the clock). Trail steps are sent fire
 * and forget, so a test waits for how many it made rather than for ids it cannot know.
 */
export async function waitForTrailSteps(
  redis: RedisTarget,
  prefix: string,
  count: () => Promise<number>,
  atLeast: number,
  timeoutMs = 30_000,
): Promise<number> {
  const reader = testRedisClient(redis);
  const subscriber = duplicateRedisClient(reader);
  let last = -1;
  try {
    return await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`trail has ${last} steps after ${timeoutMs} ms, expected ${atLeast}`)),
        timeoutMs,
      );
      const check = async () => {
        last = await count();
        if (last >= atLeast) {
          clearTimeout(timer);
          resolve(last);
        }
      };
      subscriber.on('message', () => void check().catch(reject));
      subscriber.subscribe(channelName(prefix, USAGE_LEDGER_WRITTEN_CHANNEL)).then(check).catch(reject);
    });
  } finally {
    subscriber.disconnect();
    reader.disconnect();
  }
}
