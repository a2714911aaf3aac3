import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { JobProducer } from './job-producer.service';
import { QueueName } from './queue-names';

/** BullMQ connection options (not an IORedis instance, so BullMQ owns and closes its sockets). */
export function bullConnection(redisUrl: string) {
  const u = new URL(redisUrl);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
    tls: u.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}

/**
 * Registers the BullMQ root connection and the named queues. A process that only adds jobs (no
 * processors) passes `producerOnly`: an add while Redis is down then fails at once (ioredis's
 * offline queue is off) instead of waiting until Redis is back, so a request can answer 503.
 * Workers need the offline queue (BullMQ reconnects their blocking commands), so it stays on by default.
 */
@Module({})
export class QueueModule {
  static forRoot(options: { producerOnly?: boolean } = {}): DynamicModule {
    const queues = Object.values(QueueName);
    return {
      module: QueueModule,
      global: true,
      imports: [
        BullModule.forRootAsync({
          inject: [TOLLGATE_CONFIG],
          useFactory: (config: BaseConfig) => ({
            connection: {
              ...bullConnection(config.redis.url),
              ...(options.producerOnly ? { enableOfflineQueue: false } : {}),
            },
            prefix: `${config.redis.prefix}:bull`,
          }),
        }),
        BullModule.registerQueue(...queues.map((name) => ({ name }))),
      ],
      providers: [JobProducer],
      exports: [BullModule, JobProducer],
    };
  }
}
