import { Logger } from '@nestjs/common';
import { ConfigException, loadAdminConfig } from '@tollgate/config';
import { createAdminApp } from './admin-app';

async function bootstrap(): Promise<void> {
  const config = loadAdminConfig(process.env);
  const app = await createAdminApp(config);
  app.enableShutdownHooks();
  await app.listen(config.admin.port, config.admin.host);
  const url = `http://${config.admin.host.includes(':') ? `[${config.admin.host}]` : config.admin.host}:${config.admin.port}`;
  new Logger('AdminApi').log(`admin API listening on ${url} (OpenAPI at ${url}/docs)`);
}

bootstrap().catch((err: unknown) => {
  // A config error already names every bad variable; anything else gets its stack.
  if (err instanceof ConfigException) console.error(err.message);
  else console.error(err);
  process.exit(1);
});
