import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { WorkerConfig } from '@tollgate/config';
import { WorkerModule } from './worker.module';

const LEVELS = ['error', 'warn', 'log', 'debug', 'verbose'] as const;

/** Builds the worker (BullMQ processors start with the app; HTTP only for health and metrics). */
export async function createWorkerApp(config: WorkerConfig): Promise<INestApplication> {
  return NestFactory.create(WorkerModule.forRoot(config), {
    logger: [...LEVELS.slice(0, LEVELS.indexOf(config.log.level) + 1)],
  });
}
