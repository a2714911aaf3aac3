import './telemetry';
import { Logger } from '@nestjs/common';
import { exitAfterDrainOnSignal, ShutdownDrain } from '@tollgate/observability';
import type { Server } from 'node:http';
import { loadEdgeConfig } from '@tollgate/config';
import { createEdgeApp } from './edge-app';

async function bootstrap(): Promise<void> {
  const config = loadEdgeConfig(process.env);
  const app = await createEdgeApp(config);
  await app.listen(config.edge.port, config.edge.host);
  // SIGTERM: readiness fails, in-flight requests finish (or the deadline passes), then the process exits.
  exitAfterDrainOnSignal(app.get(ShutdownDrain), app.getHttpServer() as Server, config.shutdown.deadlineMs, () =>
    app.close(),
  );
  new Logger('Edge').log(`MCP edge listening on ${await app.getUrl()}/mcp`);
}

bootstrap().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
