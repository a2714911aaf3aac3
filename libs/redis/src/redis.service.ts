import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Cluster } from 'ioredis';
import { createRedisClient, duplicateRedisClient, RedisClient } from './redis-client.factory';
import { orgKeyOf } from './redis-shards';
import { runScript, ScriptCodec } from './lua-script';

type MessageHandler = (message: string) => void;

/** The Redis name of a pub/sub channel of a deployment (`RedisService.channel` for that prefix). */
export function channelName(prefix: string, name: string): string {
  return `${prefix}:ch:${name}`;
}

/**
 * Redis for counters, caches and pub/sub. Keys carry the deployment prefix and, for tenant data,
 * the organisation's virtual shard as a hash tag (`{s<n>}`, see redis-shards.ts), so one call's
 * keys share a Redis Cluster slot.
 */
@Injectable()
export class RedisService implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisService.name);
  readonly client: RedisClient;
  private subscriber: RedisClient | null = null;
  private readonly handlers = new Map<string, Set<MessageHandler>>();

  constructor(@Inject(TOLLGATE_CONFIG) private readonly config: BaseConfig) {
    // Auto-pipelining: commands issued in the same tick (a call's settle, release and reads of
    // concurrent calls) leave in one socket write instead of one write each.
    this.client = createRedisClient(config.redis, {
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

  /** A tenant key: the shard hash tag keeps an org's keys in one cluster slot. */
  orgKey(orgId: string, ...parts: string[]): string {
    return orgKeyOf(this.prefix, orgId, ...parts);
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
    if (!this.subscriber) this.subscriber = this.openSubscriber();
    let set = this.handlers.get(full);
    if (!set) {
      set = new Set();
      this.handlers.set(full, set);
      await this.subscriber.subscribe(full);
    }
    set.add(handler);
  }

  private openSubscriber(): RedisClient {
    // A cluster's subscriber resubscribes on its own (and handles its failures). ioredis' own
    // resubscription on one server drops the SUBSCRIBE's promise, which rejects unhandled when the
    // connection is closed before Redis answers it (a shutdown right after Redis came back): this
    // client resubscribes itself, on every reconnect after the first connect.
    const standalone = !(this.client instanceof Cluster);
    const subscriber = duplicateRedisClient(this.client, {
      enableAutoPipelining: false,
      ...(standalone ? { autoResubscribe: false } : {}),
    });
    subscriber.on('error', (err) => this.logger.warn(`redis subscriber error: ${err.message}`));
    subscriber.on('message', (ch: string, msg: string) => {
      for (const h of this.handlers.get(ch) ?? []) h(msg);
    });
    if (standalone) {
      let connectedBefore = false;
      subscriber.on('ready', () => {
        const channels = [...this.handlers.keys()];
        if (connectedBefore && channels.length > 0)
          subscriber
            .subscribe(...channels)
            .catch((err: Error) => this.logger.warn(`redis subscriber could not resubscribe: ${err.message}`));
        connectedBefore = true;
      });
    }
    return subscriber;
  }

  /** Runs a script through its typed codec (see ScriptCodec), by its SHA, sending its source when the keys' node lacks it. */
  run<I, O>(codec: ScriptCodec<I, O>, input: I): Promise<O> {
    return runScript(this.client, codec, input);
  }

  async ping(): Promise<boolean> {
    return (await this.client.ping()) === 'PONG';
  }

  /** After the BullMQ workers have finished their jobs in flight (see PrismaService). */
  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([this.client.quit(), this.subscriber?.quit()]);
  }
}
