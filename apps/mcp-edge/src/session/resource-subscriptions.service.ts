import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { sha256Hex } from '@tollgate/kernel';
import { RedisService } from '@tollgate/redis';
import { UpstreamClientPool } from '@tollgate/mcp-client';
import { SessionHub } from './session-hub.service';

// A subscription lasts at most as long as a session is likely to (sessions expire on their own too).
const SUBSCRIPTION_TTL_SECONDS = 24 * 3600;

/**
 * Which subscribers (2025-11-25 sessions, 2026-07-28 listen streams) subscribed to which upstream
 * resource, kept in Redis so any edge can relay: the edge whose pooled connection hears
 * `notifications/resources/updated` looks the URI up and sends the notification, under the URI the
 * agent subscribed with, to each subscriber wherever its stream is held (SessionHub).
 */
@Injectable()
export class ResourceSubscriptions implements OnModuleInit {
  private readonly logger = new Logger(ResourceSubscriptions.name);

  constructor(
    private readonly redis: RedisService,
    private readonly pool: UpstreamClientPool,
    private readonly hub: SessionHub,
  ) {}

  onModuleInit(): void {
    this.pool.onResourceUpdated((spec, uri) => {
      this.relayUpdated(spec.orgId, spec.id, uri).catch((err: Error) =>
        this.logger.warn(`could not relay an update of a ${spec.namespace} resource: ${err.message}`),
      );
    });
  }

  async subscribe(
    orgId: string,
    subscriber: string,
    upstreamId: string,
    uri: string,
    exposedUri: string,
  ): Promise<void> {
    const key = this.key(orgId, upstreamId, uri);
    await this.redis.client
      .multi()
      .sadd(key, JSON.stringify([subscriber, exposedUri]))
      .expire(key, SUBSCRIPTION_TTL_SECONDS)
      .exec();
  }

  /** Forgets the subscriber's subscription; answers how many subscribers still want the resource's updates. */
  async unsubscribe(
    orgId: string,
    subscriber: string,
    upstreamId: string,
    uri: string,
    exposedUri: string,
  ): Promise<number> {
    const key = this.key(orgId, upstreamId, uri);
    const [, remaining] =
      (await this.redis.client
        .multi()
        .srem(key, JSON.stringify([subscriber, exposedUri]))
        .scard(key)
        .exec()) ?? [];
    return Number(remaining?.[1] ?? 0);
  }

  private async relayUpdated(orgId: string, upstreamId: string, uri: string): Promise<void> {
    const members = await this.redis.client.smembers(this.key(orgId, upstreamId, uri));
    for (const m of members) {
      const [subscriber, exposedUri] = JSON.parse(m) as [string, string];
      await this.hub.notifySession(subscriber, {
        method: 'notifications/resources/updated',
        params: { uri: exposedUri },
      });
    }
  }

  private key(orgId: string, upstreamId: string, uri: string): string {
    return this.redis.orgKey(orgId, 'res-subs', upstreamId, sha256Hex(uri));
  }
}
