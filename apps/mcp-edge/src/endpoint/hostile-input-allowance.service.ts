import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Clock, CLOCK } from '@tollgate/kernel';
import { RedisService } from '@tollgate/redis';

export const REFUSED_INPUT_WINDOW_MS = 10_000;
// Bounds the maps; a key refused past it only loses its count (never a reason to refuse another key).
const MAX_TRACKED_KEYS = 10_000;
// `<keyId> <ms left>`: a key used up its allowance on some edge; every edge refuses it for that long.
const THROTTLED_CHANNEL = 'refused-input-throttled';

/**
 * A key's refused input (a body over the size, depth or value limits, one that does not parse,
 * arguments over their limits) costs the edge work that no budget pays for: past the allowance,
 * the key's requests are answered 429 before their body is read, until the window ends.
 *
 * The count is shared by every edge: each refusal increments the key's counter in Redis (a fixed
 * window), and the edge whose increment reaches the allowance tells the others over pub/sub. So
 * Redis is touched on the refusal path only; a good request asks nothing but this edge's memory
 * (`blockedForMs` is synchronous). Should Redis not answer, each edge still counts on its own, as
 * before (N edges then give a key at most N allowances). `EDGE_REFUSED_INPUT_ALLOWANCE` sets the
 * allowance; 0 turns the throttle off. Times are the injected clock's (`CLOCK`), so a test moves
 * past a window instead of waiting for it; Redis gives only what is left of its window.
 */
@Injectable()
export class HostileInputAllowance implements OnModuleInit {
  private readonly logger = new Logger(HostileInputAllowance.name);
  // This edge's own count per key (the fallback when Redis does not answer).
  private readonly refusals = new Map<string, { count: number; windowEnds: number }>();
  // Keys past the allowance anywhere, until when (this edge's clock).
  private readonly throttled = new Map<string, number>();
  private readonly allowance: number;

  constructor(
    @Inject(TOLLGATE_CONFIG) config: EdgeConfig,
    private readonly redis: RedisService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.allowance = config.edge.refusedInputAllowance;
  }

  async onModuleInit(): Promise<void> {
    if (this.allowance === 0) return;
    await this.redis.subscribe(THROTTLED_CHANNEL, (message) => {
      const [keyId, msLeft] = message.split(' ');
      if (keyId && Number(msLeft) > 0) this.throttle(keyId, this.clock.now() + Number(msLeft));
    });
  }

  /** Milliseconds until the key may send again, or 0. Memory only: no Redis round trip. */
  blockedForMs(keyId: string, now = this.clock.now()): number {
    if (this.allowance === 0) return 0;
    const until = this.throttled.get(keyId);
    if (until !== undefined) {
      if (until > now) return until - now;
      this.throttled.delete(keyId);
    }
    const entry = this.refusals.get(keyId);
    if (!entry) return 0;
    if (entry.windowEnds <= now) {
      this.refusals.delete(keyId);
      return 0;
    }
    return entry.count >= this.allowance ? entry.windowEnds - now : 0;
  }

  /**
   * Counts one refused request of the key, here and across edges. Resolves once the shared count
   * is in (callers need not wait: the key's next requests are refused once it is).
   */
  recordRefusal(keyId: string, now = this.clock.now()): Promise<void> {
    if (this.allowance === 0) return Promise.resolve();
    this.countLocally(keyId, now);
    return this.countShared(keyId).catch((err: Error) =>
      // This edge's own count still holds the key back.
      this.logger.warn(`refused-input count not shared (Redis): ${err.message}`),
    );
  }

  private countLocally(keyId: string, now: number): void {
    const entry = this.refusals.get(keyId);
    if (entry && entry.windowEnds > now) {
      entry.count++;
      return;
    }
    evictExpired(this.refusals, MAX_TRACKED_KEYS, (e) => e.windowEnds <= now);
    this.refusals.set(keyId, { count: 1, windowEnds: now + REFUSED_INPUT_WINDOW_MS });
  }

  private async countShared(keyId: string): Promise<void> {
    const key = this.redis.key('refused-input', keyId);
    // A fixed window from the key's first refusal: created with its expiry, then counted.
    const replies = await this.redis.client
      .multi()
      .set(key, '0', 'PX', REFUSED_INPUT_WINDOW_MS, 'NX')
      .incr(key)
      .pttl(key)
      .exec();
    if (!replies) return;
    for (const [err] of replies) if (err) throw err;
    const count = Number(replies[1][1]);
    const msLeft = Number(replies[2][1]);
    if (count < this.allowance || msLeft <= 0) return;
    this.throttle(keyId, this.clock.now() + msLeft);
    // Only the refusal that reaches the allowance tells the others; an edge that missed the message
    // learns it from its own next increment for the key.
    if (count === this.allowance) await this.redis.publish(THROTTLED_CHANNEL, `${keyId} ${msLeft}`);
  }

  private throttle(keyId: string, until: number): void {
    const now = this.clock.now();
    if (!this.throttled.has(keyId)) evictExpired(this.throttled, MAX_TRACKED_KEYS, (u) => u <= now);
    this.throttled.set(keyId, Math.max(until, this.throttled.get(keyId) ?? 0));
  }
}

/** Makes room in a bounded map: drops expired entries, and everything if none had expired. */
function evictExpired<V>(map: Map<string, V>, max: number, expired: (v: V) => boolean): void {
  if (map.size < max) return;
  for (const [k, v] of map) if (expired(v)) map.delete(k);
  if (map.size >= max) map.clear();
}
