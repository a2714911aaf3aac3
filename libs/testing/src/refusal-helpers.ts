import { USAGE_LEDGER_WRITTEN_CHANNEL, UsageLedgerNotice } from '@tollgate/usage';
import { channelName } from '@tollgate/redis';
import { RedisTarget, testRedisClient } from './test-redis';

/** Refused calls the worker writes, as it announces them; subscribe before the calls are refused. */
export interface RefusalWatch {
  /** Resolves with the ids once at least `count` refused calls were written since the watch began. */
  written(count: number, timeoutMs?: number): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * Watches the worker's `usage-ledger-written` notices for refused calls written to "RefusedCall"
 * (their ids are the edge's, unknown to a test), so a test awaits the write instead of polling.
 */
export async function watchRefusedCalls(redis: RedisTarget, prefix: string): Promise<RefusalWatch> {
  const subscriber = testRedisClient(redis);
  const ids: string[] = [];
  let wake: () => void = () => undefined;
  subscriber.on('message', (_channel: string, message: string) => {
    ids.push(...((JSON.parse(message) as UsageLedgerNotice).refused ?? []));
    wake();
  });
  await subscriber.subscribe(channelName(prefix, USAGE_LEDGER_WRITTEN_CHANNEL));
  return {
    async written(count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (ids.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`${ids.length} of ${count} refused calls written after ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      return [...ids];
    },
    async close() {
      await subscriber.quit().catch(() => undefined);
    },
  };
}
