import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { WorkerConfig } from '@tollgate/config';
import { createAppLogger, ShutdownDrain } from '@tollgate/observability';
import type { Server } from 'node:http';
import { WorkerModule } from './worker.module';

/** Builds the worker (BullMQ processors start with the app; HTTP only for health and metrics). */
export async function createWorkerApp(config: WorkerConfig): Promise<INestApplication> {
  const app = await NestFactory.create(WorkerModule.forRoot(config), {
    logger: createAppLogger({ app: 'worker', ...config.log }),
  });
  app.get(ShutdownDrain).attach(app.getHttpServer() as Server);
  return app;
}
