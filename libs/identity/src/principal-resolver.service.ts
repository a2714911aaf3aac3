import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { RedisService } from '@tollgate/redis';
import { KEY_REVOKED_CHANNEL } from './identity.service';
import { Principal } from './principal';
import { hashSecret, looksLikeVirtualKey } from './secret-token';

interface CacheEntry {
  principal: Principal | null;
  expiresAtMs: number | null;
  cachedUntilMs: number;
}

const POSITIVE_TTL_MS = 60_000;
// Unknown secrets are random strings: caching the miss briefly cannot hide a key created later.
const NEGATIVE_TTL_MS = 5_000;
const LAST_USED_WRITE_INTERVAL_MS = 60_000;
const MAX_ENTRIES = 50_000;

/**
 * Resolves a virtual key to its principal from an in-memory cache. Revocation reaches every
 * replica through Redis pub/sub, so a revoked key stops working everywhere within a second.
 */
@Injectable()
export class PrincipalResolver implements OnModuleInit {
  private readonly logger = new Logger(PrincipalResolver.name);
  private readonly cache = new Map<string, CacheEntry>();
  private readonly hashByKeyId = new Map<string, string>();
  /**
   * The HMAC of each live key's secret, so a request does not compute it again (it was the
   * costliest step of authenticating a call). Only secrets of existing keys are kept, so random
   * secrets cannot fill it; a revoked key's entry goes with it.
   */
  private readonly hashBySecret = new Map<string, string>();
  private readonly lastUsedWrites = new Map<string, number>();

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    @Inject(TOLLGATE_CONFIG) private readonly config: BaseConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.redis.subscribe(KEY_REVOKED_CHANNEL, (keyId) => this.forgetKey(keyId));
  }

  forgetKey(keyId: string): void {
    const hash = this.hashByKeyId.get(keyId);
    if (hash) {
      this.cache.delete(hash);
      for (const [secret, h] of this.hashBySecret) if (h === hash) this.hashBySecret.delete(secret);
    }
    this.hashByKeyId.delete(keyId);
  }

  /** The principal of a presented secret, or null when the key is unknown, revoked or expired. */
  async resolveVirtualKey(secret: string): Promise<Principal | null> {
    if (!looksLikeVirtualKey(secret)) return null;
    const hash = this.hashBySecret.get(secret) ?? hashSecret(secret, this.config.security.keyHashSecret);
    const now = Date.now();
    let entry = this.cache.get(hash);
    if (!entry || entry.cachedUntilMs <= now) {
      entry = await this.load(hash, now);
    }
    if (!entry.principal) return null;
    if (!this.hashBySecret.has(secret)) {
      if (this.hashBySecret.size >= MAX_ENTRIES) this.hashBySecret.clear();
      this.hashBySecret.set(secret, hash);
    }
    if (entry.expiresAtMs !== null && entry.expiresAtMs <= now) return null;
    this.touchLastUsed(entry.principal.keyId, now);
    return entry.principal;
  }

  private async load(hash: string, now: number): Promise<CacheEntry> {
    const key = await this.prisma.virtualKey.findUnique({
      where: { secretHash: hash },
      include: { org: { select: { timeZone: true } } },
    });
    const entry: CacheEntry =
      key && !key.revokedAt
        ? {
            principal: {
              orgId: key.orgId,
              teamId: key.teamId,
              userId: key.userId,
              keyId: key.id,
              keyPrefix: key.prefix,
              orgTimeZone: key.org.timeZone,
              disclosureMode: key.disclosureMode,
            },
            expiresAtMs: key.expiresAt ? key.expiresAt.getTime() : null,
            cachedUntilMs: now + POSITIVE_TTL_MS,
          }
        : { principal: null, expiresAtMs: null, cachedUntilMs: now + NEGATIVE_TTL_MS };
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(hash, entry);
    if (entry.principal) this.hashByKeyId.set(entry.principal.keyId, hash);
    return entry;
  }

  private touchLastUsed(keyId: string, now: number): void {
    const last = this.lastUsedWrites.get(keyId) ?? 0;
    if (now - last < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWrites.set(keyId, now);
    this.prisma.virtualKey
      .update({ where: { id: keyId }, data: { lastUsedAt: new Date(now) } })
      .catch((err: Error) => this.logger.warn(`could not record last use of key ${keyId}: ${err.message}`));
  }
}
