import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { DynamicModule, Injectable, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { bullConnection } from '@tollgate/redis';
import type { Queue, Telemetry } from 'bullmq';
import { Cluster } from 'ioredis';
import { JobProducer } from './job-producer.service';
import { logQueueErrors } from './queue-error-log';
import { QueueName } from './queue-names';

const QUEUE_ERROR_LOG = Symbol('QUEUE_ERROR_LOG');

/**
 * BullMQ's key prefix: the deployment prefix plus a hash tag, so all keys of a queue share one
 * Redis Cluster slot (BullMQ's scripts touch several of them at once).
 */
export function bullPrefix(prefix: string): string {
  return `${prefix}:{bull}`;
}

/**
 * On Redis Cluster BullMQ is handed a `Cluster` (it cannot build one from options) and does not
 * close it: this closes it at shutdown, after BullMQ's queues and workers (Nest shuts the BullMQ
 * modules, imported by this one, down first).
 */
@Injectable()
export class BullClusterConnections implements OnApplicationShutdown {
  private readonly clients: Cluster[] = [];

  track<T>(connection: T): T {
    if (connection instanceof Cluster) this.clients.push(connection);
    return connection;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled(this.clients.map((c) => c.quit()));
  }
}

/**
 * Registers the BullMQ root connection and the named queues. A process that only adds jobs (no
 * processors) passes `producerOnly`: an add while Redis is down then fails at once (ioredis's
 * offline queue is off) instead of waiting until Redis is back, so a request can answer 503.
 * Workers need the offline queue (BullMQ reconnects their blocking commands), so it stays on by default.
 * `telemetry` (BullMQ's OpenTelemetry hook, from the app) carries trace context from producer to worker.
 */
@Module({})
export class QueueModule {
  static forRoot(options: { producerOnly?: boolean; telemetry?: Telemetry } = {}): DynamicModule {
    const queues = Object.values(QueueName);
    return {
      module: QueueModule,
      global: true,
      imports: [
        BullModule.forRootAsync({
          extraProviders: [BullClusterConnections],
          inject: [TOLLGATE_CONFIG, BullClusterConnections],
          useFactory: (config: BaseConfig, clusters: BullClusterConnections) => ({
            connection: clusters.track(
              bullConnection(config.redis, options.producerOnly ? { enableOfflineQueue: false } : {}),
            ),
            prefix: bullPrefix(config.redis.prefix),
            telemetry: options.telemetry,
          }),
        }),
        BullModule.registerQueue(...queues.map((name) => ({ name }))),
      ],
      providers: [
        JobProducer,
        {
          // Every queue's Redis errors logged by message (queue-error-log.ts), from when it is made.
          provide: QUEUE_ERROR_LOG,
          inject: queues.map((name) => getQueueToken(name)),
          useFactory: (...made: Queue[]) => {
            const logger = new Logger('Queue');
            for (const q of made) logQueueErrors(q, logger);
            return true;
          },
        },
      ],
      exports: [BullModule, JobProducer],
    };
  }
}
