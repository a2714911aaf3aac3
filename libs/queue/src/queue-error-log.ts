import { OnWorkerEvent, WorkerHost } from '@nestjs/bullmq';
import { BeforeApplicationShutdown, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';

// A BullMQ queue or worker with no 'error' listener prints a Redis error with console.error as the
// whole object, and ioredis attaches the failed command to it: after a refused AUTH, the
// credentials (`HELLO 3 AUTH <user> <password>`). These listeners log the message only.

/** Logs a queue's Redis errors by message (see above). */
export function logQueueErrors(queue: Queue, logger: Logger): void {
  queue.on('error', (err: Error) => logger.warn(`queue ${queue.name}: ${err.message}`));
}

/**
 * A processor whose worker's Redis errors are logged by message, never as the error object (see
 * above), and whose jobs in progress are cancelled when the app shuts down.
 */
export abstract class LoggedWorkerHost extends WorkerHost implements BeforeApplicationShutdown {
  private readonly workerErrors = new Logger('QueueWorker');

  /**
   * BullMQ's close waits for the jobs in progress, and a sync of an upstream that never answers
   * holds for its call timeout (up to 10 minutes): shutdown aborts them instead (a processor that
   * takes the third `signal` argument stops; the job fails and is retried, on this or another worker).
   */
  beforeApplicationShutdown(): void {
    let worker: WorkerHost['worker'];
    try {
      worker = this.worker;
    } catch {
      return; // the app is closed before its workers were made
    }
    worker.cancelAllJobs('the worker is shutting down');
  }

  @OnWorkerEvent('error')
  onWorkerError(err: Error): void {
    this.workerErrors.warn(`worker ${this.worker.name}: ${err.message}`);
  }
}
