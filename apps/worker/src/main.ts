import { Logger } from '@nestjs/common';
import { loadWorkerConfig } from '@tollgate/config';
import { createWorkerApp } from './worker-app';

async function bootstrap(): Promise<void> {
  const config = loadWorkerConfig(process.env);
  const app = await createWorkerApp(config);
  app.enableShutdownHooks();
  await app.listen(config.worker.port, config.worker.host);
  new Logger('Worker').log(`worker health on ${await app.getUrl()}/healthz`);
}

bootstrap().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
