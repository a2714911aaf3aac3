import './telemetry';
import { Logger } from '@nestjs/common';
import {
  ASYNC_CONTEXT_FRAME_FLAG,
  asyncLocalStorageOnPromiseHooks,
  exitAfterDrainOnSignal,
  ShutdownDrain,
} from '@tollgate/observability';
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
  const logger = new Logger('Edge');
  logger.log(`MCP edge listening on ${await app.getUrl()}/mcp`);
  if (asyncLocalStorageOnPromiseHooks(process.versions.node, process.execArgv, process.env.NODE_OPTIONS))
    logger.warn(
      `started without ${ASYNC_CONTEXT_FRAME_FLAG}: on Node ${process.versions.node} every promise pays AsyncLocalStorage's hooks (about 10 % more CPU per call); start node with the flag, as the Dockerfile does`,
    );
}

bootstrap().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
