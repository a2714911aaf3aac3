import { RedisService } from './redis.service';

/** Published with an org id whenever an admin changes that org's policies, prices, budgets or upstreams. */
export const ORG_CONFIG_CHANGED_CHANNEL = 'org-config-changed';

/**
 * A per-organisation in-memory cache dropped on `org-config-changed`, so every replica sees an
 * admin's change within a pub/sub round trip. The TTL bounds staleness if a message is lost.
 */
export class OrgConfigCache<T> {
  private readonly entries = new Map<string, { value: Promise<T>; until: number }>();

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
    this.entries.set(orgId, { value, until: now + this.ttlMs });
    value.catch(() => this.entries.delete(orgId));
    return value;
  }

  invalidate(orgId: string): void {
    this.entries.delete(orgId);
  }
}
