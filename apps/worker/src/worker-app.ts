import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { WorkerConfig } from '@tollgate/config';
import { createNamedApp, ShutdownDrain } from '@tollgate/observability';
import type { Server } from 'node:http';
import { WorkerModule } from './worker.module';

/** Builds the worker (BullMQ processors start with the app; HTTP only for health and metrics). */
export async function createWorkerApp(config: WorkerConfig): Promise<INestApplication> {
  const app = await createNamedApp({ app: 'worker', ...config.log }, (logger) =>
    NestFactory.create(WorkerModule.forRoot(config), { logger }),
  );
  app.get(ShutdownDrain).attach(app.getHttpServer() as Server);
  return app;
}
