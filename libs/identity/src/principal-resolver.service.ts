import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { budgetClock, CLOCK, Clock } from '@tollgate/kernel';
import { RedisService } from '@tollgate/redis';
import { KEY_REVOKED_CHANNEL, ORG_CHANGED_CHANNEL } from './identity.service';
import { looksLikeOAuthAccessToken, OAUTH_KEY_CLAIM, oauthStoreKey, StoredOAuthAccessToken } from './oauth-token-store';
import { Principal } from './principal';
import { hashSecret, looksLikeVirtualKey } from './secret-token';

/** A credential resolved: its principal, or why it is refused (unknown and org-disabled differ for the caller). */
export type CredentialResolution =
  | { ok: true; principal: Principal }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'org-disabled'; orgId: string };

interface CacheEntry {
  principal: Principal | null;
  /** The key is live but its organisation is disabled. */
  orgDisabled: boolean;
  expiresAtMs: number | null;
  cachedUntilMs: number;
}

const POSITIVE_TTL_MS = 60_000;
// Unknown secrets are random strings: caching the miss briefly cannot hide a key created later.
const NEGATIVE_TTL_MS = 5_000;
const LAST_USED_WRITE_INTERVAL_MS = 60_000;
const MAX_ENTRIES = 50_000;

function resolutionOf(entry: CacheEntry | null): CredentialResolution {
  if (!entry?.principal) return { ok: false, reason: 'invalid' };
  if (entry.orgDisabled) return { ok: false, reason: 'org-disabled', orgId: entry.principal.orgId };
  return { ok: true, principal: entry.principal };
}

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
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.redis.subscribe(KEY_REVOKED_CHANNEL, (keyId) => this.forgetKey(keyId));
    await this.redis.subscribe(ORG_CHANGED_CHANNEL, (orgId) => this.forgetOrg(orgId));
  }

  /** Drops every cached key of an organisation (disabled, enabled, deleted, zone changed). */
  forgetOrg(orgId: string): void {
    for (const [hash, entry] of this.cache) {
      if (entry.principal?.orgId !== orgId) continue;
      this.cache.delete(hash);
      this.forgetKey(entry.principal.keyId);
    }
  }

  forgetKey(keyId: string): void {
    const hash = this.hashByKeyId.get(keyId);
    if (hash) {
      this.cache.delete(hash);
      for (const [secret, h] of this.hashBySecret) if (h === hash) this.hashBySecret.delete(secret);
    }
    this.hashByKeyId.delete(keyId);
  }

  /**
   * The principal of a presented credential, or null when its key is unknown, revoked or expired.
   * The credential is a virtual key's secret or an OAuth access token issued for this edge's
   * resource, which stands for a key of kind OAUTH (same cache, same revocation).
   */
  async resolveVirtualKey(secret: string): Promise<Principal | null> {
    const resolution = await this.resolveCredential(secret);
    return resolution.ok ? resolution.principal : null;
  }

  /** As resolveVirtualKey, saying why a live key of a disabled organisation is refused. */
  async resolveCredential(secret: string): Promise<CredentialResolution> {
    return resolutionOf(await this.resolveEntry(secret));
  }

  /**
   * resolveCredential without a promise, for a virtual key seen before whose entry is cached and
   * fresh (nearly every request); undefined when resolveCredential has to look it up.
   */
  cachedCredential(secret: string): CredentialResolution | undefined {
    // Only live virtual keys' secrets are kept there (resolveEntry), never an OAuth token.
    const hash = this.hashBySecret.get(secret);
    if (hash === undefined) return undefined;
    const now = this.clock.now();
    const entry = this.freshEntry(hash, now);
    return entry && resolutionOf(this.liveEntry(secret, hash, entry, now));
  }

  private async resolveEntry(secret: string): Promise<CacheEntry | null> {
    if (!looksLikeVirtualKey(secret)) return this.resolveOAuthAccessToken(secret);
    const hash = this.hashBySecret.get(secret) ?? hashSecret(secret, this.config.security.keyHashSecret);
    const now = this.clock.now();
    const entry = this.freshEntry(hash, now) ?? (await this.load(hash, now));
    return this.liveEntry(secret, hash, entry, now);
  }

  /** The cached entry of a key's hash while it is fresh; undefined when it must be loaded. */
  private freshEntry(hash: string, now: number): CacheEntry | undefined {
    const entry = this.cache.get(hash);
    return entry && entry.cachedUntilMs > now ? entry : undefined;
  }

  /** A virtual key's entry as a request may use it: null for an unknown or expired key; its use noted. */
  private liveEntry(secret: string, hash: string, entry: CacheEntry, now: number): CacheEntry | null {
    if (!entry.principal) return null;
    if (!this.hashBySecret.has(secret)) {
      if (this.hashBySecret.size >= MAX_ENTRIES) this.hashBySecret.clear();
      this.hashBySecret.set(secret, hash);
    }
    if (entry.expiresAtMs !== null && entry.expiresAtMs <= now) return null;
    if (!entry.orgDisabled) this.touchLastUsed(entry.principal.keyId, now);
    return entry;
  }

  /**
   * An opaque access token is read from the authorization server's store on every request, so a
   * revoked token or grant stops at once; its key comes from the cache revocation clears.
   */
  private async resolveOAuthAccessToken(token: string): Promise<CacheEntry | null> {
    const resource = this.config.oauth.resource;
    if (!resource || !looksLikeOAuthAccessToken(token)) return null;
    const raw = await this.redis.client.get(oauthStoreKey(this.config.redis.prefix, 'AccessToken', token));
    if (!raw) return null;
    const stored = JSON.parse(raw) as StoredOAuthAccessToken;
    const now = this.clock.now();
    const audience = Array.isArray(stored.aud) ? stored.aud : [stored.aud];
    if (!stored.exp || stored.exp * 1000 <= now || !audience.includes(resource)) return null;
    const keyId = stored.extra?.[OAUTH_KEY_CLAIM];
    if (typeof keyId !== 'string') return null;
    const cacheKey = `oauth-key:${keyId}`;
    let entry = this.cache.get(cacheKey);
    if (!entry || entry.cachedUntilMs <= now) entry = await this.load(cacheKey, now, { id: keyId, kind: 'OAUTH' });
    if (!entry.principal || (entry.expiresAtMs !== null && entry.expiresAtMs <= now)) return null;
    if (!entry.orgDisabled) this.touchLastUsed(entry.principal.keyId, now);
    return entry;
  }

  private async load(
    hash: string,
    now: number,
    where: { secretHash: string } | { id: string; kind: 'OAUTH' } = { secretHash: hash },
  ): Promise<CacheEntry> {
    const key = await this.prisma.virtualKey.findFirst({
      where,
      include: {
        org: {
          select: {
            timeZone: true,
            previousTimeZone: true,
            timeZoneChangedAt: true,
            disabledAt: true,
            deletedAt: true,
            trailMode: true,
          },
        },
      },
    });
    const entry: CacheEntry =
      key && !key.revokedAt && !key.org.deletedAt
        ? {
            principal: {
              orgId: key.orgId,
              teamId: key.teamId,
              userId: key.userId,
              keyId: key.id,
              keyPrefix: key.prefix,
              // Budget periods running at a zone change keep their bounds (kernel budgetClock).
              orgTimeZone: budgetClock(key.org.timeZone, key.org.previousTimeZone, key.org.timeZoneChangedAt),
              disclosureMode: key.disclosureMode,
              trailMode: key.org.trailMode,
            },
            orgDisabled: key.org.disabledAt !== null,
            expiresAtMs: key.expiresAt ? key.expiresAt.getTime() : null,
            cachedUntilMs: now + POSITIVE_TTL_MS,
          }
        : { principal: null, orgDisabled: false, expiresAtMs: null, cachedUntilMs: now + NEGATIVE_TTL_MS };
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
