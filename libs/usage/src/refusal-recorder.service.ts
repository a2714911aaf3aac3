import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { usageOutboxKeys } from './outbox-streams';
import { RedisService, shardOf } from '@tollgate/redis';
import { RefusedCall, refusalEntryFields } from './refused-call';
import { newCallId } from './usage-event';

/**
 * Refusals of one key an edge logs one by one per minute (UTC minute, per edge replica). Past it,
 * the key's refusals of one tool and code are counted and sent once a second as one row standing
 * for them all (`calls` > 1): a key refused thousands of times a second costs the outbox and the
 * table a few rows a second, while the counts stay exact.
 */
export const REFUSALS_LOGGED_PER_KEY_MINUTE = 120;
/** How often the counted (not logged) refusals go out. */
export const REFUSAL_OVERFLOW_FLUSH_MS = 1_000;

/** A refusal as the edge knows it when it answers. */
export type RefusalRecord = Omit<RefusedCall, 'id' | 'calls'>;

/**
 * Records refused governed calls in the usage outbox (the stream of the organisation's shard, an
 * entry with REFUSAL_ENTRY_FIELD), which the worker drains into "RefusedCall". Fire and forget: the
 * XADD goes on the shared auto-pipelined connection with whatever else this turn sends, and the
 * refusal's answer does not wait for it. A refusal lost with Redis (unreachable, a failover) is not
 * retried: unlike a usage event, it charged nothing.
 */
@Injectable()
export class RefusalRecorder implements BeforeApplicationShutdown {
  private readonly logger = new Logger(RefusalRecorder.name);
  private minute = -1;
  private readonly loggedThisMinute = new Map<string, number>();
  private readonly overflow = new Map<string, RefusedCall>();
  private overflowTimer: NodeJS.Timeout | null = null;
  private lastFailureLogAt = 0;

  constructor(private readonly redis: RedisService) {}

  /** Records one refusal: logged on its own, or counted into its key's row of the second. */
  record(refusal: RefusalRecord, now = Date.now()): void {
    const minute = Math.floor(now / 60_000);
    if (minute !== this.minute) {
      this.minute = minute;
      this.loggedThisMinute.clear();
    }
    const logged = this.loggedThisMinute.get(refusal.keyId) ?? 0;
    if (logged < REFUSALS_LOGGED_PER_KEY_MINUTE) {
      this.loggedThisMinute.set(refusal.keyId, logged + 1);
      this.send({ ...refusal, id: newCallId(), calls: 1 });
      return;
    }
    const group = `${refusal.keyId}\u0000${refusal.upstreamId ?? ''}\u0000${refusal.toolName}\u0000${refusal.code}\u0000${refusal.budgetId ?? ''}`;
    const counted = this.overflow.get(group);
    if (counted) counted.calls += 1;
    else this.overflow.set(group, { ...refusal, id: newCallId(), calls: 1 });
    this.overflowTimer ??= setTimeout(() => this.flushOverflow(), REFUSAL_OVERFLOW_FLUSH_MS).unref();
  }

  /** Sends the counted refusals now (the timer does it every second; shutdown does it last). */
  flushOverflow(): void {
    if (this.overflowTimer) clearTimeout(this.overflowTimer);
    this.overflowTimer = null;
    for (const refusal of this.overflow.values()) this.send(refusal);
    this.overflow.clear();
  }

  beforeApplicationShutdown(): void {
    this.flushOverflow();
  }

  private send(refusal: RefusedCall): void {
    const stream = usageOutboxKeys(this.redis.prefix, shardOf(refusal.orgId)).events;
    const [field, value] = refusalEntryFields(refusal);
    this.redis.client.xadd(stream, '*', field, value).catch((err: Error) => {
      // At most one line a second: Redis down would otherwise log once per refused call.
      const now = Date.now();
      if (now - this.lastFailureLogAt < 1_000) return;
      this.lastFailureLogAt = now;
      this.logger.warn(`refused call not recorded (Redis: ${err.message})`);
    });
  }
}
