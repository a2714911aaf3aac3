import './telemetry';
import { Logger } from '@nestjs/common';
import { exitAfterDrainOnSignal, ShutdownDrain } from '@tollgate/observability';
import type { Server } from 'node:http';
import { ConfigException, loadAdminConfig } from '@tollgate/config';
import { createAdminApp } from './admin-app';

async function bootstrap(): Promise<void> {
  const config = loadAdminConfig(process.env);
  const app = await createAdminApp(config);
  await app.listen(config.admin.port, config.admin.host);
  // SIGTERM: readiness fails, in-flight requests finish (or the deadline passes), then the process exits.
  exitAfterDrainOnSignal(app.get(ShutdownDrain), app.getHttpServer() as Server, config.shutdown.deadlineMs, () =>
    app.close(),
  );
  const url = `http://${config.admin.host.includes(':') ? `[${config.admin.host}]` : config.admin.host}:${config.admin.port}`;
  new Logger('AdminApi').log(`admin API listening on ${url} (OpenAPI at ${url}/docs)`);
}

bootstrap().catch((err: unknown) => {
  // A config error already names every bad variable; anything else gets its stack.
  if (err instanceof ConfigException) console.error(err.message);
  else console.error(err);
  process.exit(1);
});
