import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';

type MessageHandler = (message: string) => void;

/** The Redis name of a pub/sub channel of a deployment (`RedisService.channel` for that prefix). */
export function channelName(prefix: string, name: string): string {
  return `${prefix}:ch:${name}`;
}

/**
 * Redis for counters, caches and pub/sub. Keys carry the deployment prefix and, for tenant data,
 * the organisation in a hash tag (`{org:<id>}`), so one call's keys share a Redis Cluster slot.
 */
@Injectable()
export class RedisService implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisService.name);
  readonly client: Redis;
  private subscriber: Redis | null = null;
  private readonly handlers = new Map<string, Set<MessageHandler>>();
  /** Each Lua script's SHA-1, as Redis names it. */
  private readonly scriptShas = new Map<string, string>();

  constructor(@Inject(TOLLGATE_CONFIG) private readonly config: BaseConfig) {
    // Auto-pipelining: commands issued in the same tick (a call's settle, release and reads of
    // concurrent calls) leave in one socket write instead of one write each.
    this.client = new Redis(config.redis.url, {
      maxRetriesPerRequest: 3,
      lazyConnect: false,
      enableAutoPipelining: true,
    });
    this.client.on('error', (err) => this.logger.warn(`redis error: ${err.message}`));
  }

  get prefix(): string {
    return this.config.redis.prefix;
  }

  /** A key outside any tenant. */
  key(...parts: string[]): string {
    return [this.prefix, ...parts].join(':');
  }

  /** A tenant key: the org hash tag keeps an org's keys in one cluster slot. */
  orgKey(orgId: string, ...parts: string[]): string {
    return [this.prefix, `{org:${orgId}}`, ...parts].join(':');
  }

  channel(name: string): string {
    return channelName(this.prefix, name);
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.client.publish(this.channel(channel), message);
  }

  /** Subscribes through one shared connection; resolves once Redis confirms the subscription. */
  async subscribe(channel: string, handler: MessageHandler): Promise<void> {
    const full = this.channel(channel);
    if (!this.subscriber) {
      this.subscriber = this.client.duplicate({ enableAutoPipelining: false });
      this.subscriber.on('error', (err) => this.logger.warn(`redis subscriber error: ${err.message}`));
      this.subscriber.on('message', (ch: string, msg: string) => {
        for (const h of this.handlers.get(ch) ?? []) h(msg);
      });
    }
    let set = this.handlers.get(full);
    if (!set) {
      set = new Set();
      this.handlers.set(full, set);
      await this.subscriber.subscribe(full);
    }
    set.add(handler);
  }

  /**
   * Runs a Lua script by its SHA (EVALSHA), loading it once when Redis does not have it (first
   * use, a restart, a failover, SCRIPT FLUSH).
   */
  async evalScript(source: string, keys: string[], args: (string | number)[]): Promise<unknown> {
    let sha = this.scriptShas.get(source);
    if (!sha) {
      sha = createHash('sha1').update(source).digest('hex');
      this.scriptShas.set(source, sha);
    }
    try {
      return await this.client.evalsha(sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
      await this.client.script('LOAD', source);
      return this.client.evalsha(sha, keys.length, ...keys, ...args);
    }
  }

  async ping(): Promise<boolean> {
    return (await this.client.ping()) === 'PONG';
  }

  /** After the BullMQ workers have finished their jobs in flight (see PrismaService). */
  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([this.client.quit(), this.subscriber?.quit()]);
  }
}
