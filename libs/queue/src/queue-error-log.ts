import { OnWorkerEvent, WorkerHost } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';

// A BullMQ queue or worker with no 'error' listener prints a Redis error with console.error as the
// whole object, and ioredis attaches the failed command to it: after a refused AUTH, the
// credentials (`HELLO 3 AUTH <user> <password>`). These listeners log the message only.

/** Logs a queue's Redis errors by message (see above). */
export function logQueueErrors(queue: Queue, logger: Logger): void {
  queue.on('error', (err: Error) => logger.warn(`queue ${queue.name}: ${err.message}`));
}

/** A processor whose worker's Redis errors are logged by message, never as the error object (see above). */
export abstract class LoggedWorkerHost extends WorkerHost {
  private readonly workerErrors = new Logger('QueueWorker');

  @OnWorkerEvent('error')
  onWorkerError(err: Error): void {
    this.workerErrors.warn(`worker ${this.worker.name}: ${err.message}`);
  }
}
