import { RedisService } from './redis.service';

/** Published with an org id whenever an admin changes that org's policies, prices, budgets or upstreams. */
export const ORG_CONFIG_CHANGED_CHANNEL = 'org-config-changed';

interface CacheEntry<T> {
  value: Promise<T>;
  until: number;
  /** The value once its load has resolved (for peek). */
  loaded?: { value: T };
}

/**
 * A per-organisation in-memory cache dropped on `org-config-changed`, so every replica sees an
 * admin's change within a pub/sub round trip. The TTL bounds staleness if a message is lost.
 */
export class OrgConfigCache<T> {
  private readonly entries = new Map<string, CacheEntry<T>>();

  constructor(
    private readonly load: (orgId: string) => Promise<T>,
    private readonly ttlMs = 30_000,
  ) {}

  async attach(redis: RedisService): Promise<void> {
    await redis.subscribe(ORG_CONFIG_CHANGED_CHANNEL, (orgId) => this.entries.delete(orgId));
  }

  get(orgId: string): Promise<T> {
    const now = Date.now();
    const hit = this.entries.get(orgId);
    if (hit && hit.until > now) return hit.value;
    const value = this.load(orgId);
    const entry: CacheEntry<T> = { value, until: now + this.ttlMs };
    this.entries.set(orgId, entry);
    value.then(
      (loaded) => (entry.loaded = { value: loaded }),
      () => this.entries.delete(orgId),
    );
    return value;
  }

  /**
   * The organisation's value without a promise, when it is loaded and fresh (what `get` would
   * resolve with); undefined when `get` has to load it. For the hot path of a call, where each
   * promise waited for is a turn of the microtask queue.
   */
  peek(orgId: string): T | undefined {
    const hit = this.entries.get(orgId);
    return hit?.loaded && hit.until > Date.now() ? hit.loaded.value : undefined;
  }

  invalidate(orgId: string): void {
    this.entries.delete(orgId);
  }
}
