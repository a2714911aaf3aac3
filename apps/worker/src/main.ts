import './telemetry';
import { Logger } from '@nestjs/common';
import { exitAfterDrainOnSignal, ShutdownDrain } from '@tollgate/observability';
import type { Server } from 'node:http';
import { loadWorkerConfig } from '@tollgate/config';
import { createWorkerApp } from './worker-app';

async function bootstrap(): Promise<void> {
  const config = loadWorkerConfig(process.env);
  const app = await createWorkerApp(config);
  await app.listen(config.worker.port, config.worker.host);
  // SIGTERM: readiness fails, in-flight requests finish (or the deadline passes), then the process exits.
  exitAfterDrainOnSignal(app.get(ShutdownDrain), app.getHttpServer() as Server, config.shutdown.deadlineMs, () =>
    app.close(),
  );
  new Logger('Worker').log(`worker health on ${await app.getUrl()}/healthz`);
}

bootstrap().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
