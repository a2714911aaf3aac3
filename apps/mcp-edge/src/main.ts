import { Logger } from '@nestjs/common';
import { loadEdgeConfig } from '@tollgate/config';
import { createEdgeApp } from './edge-app';

async function bootstrap(): Promise<void> {
  const config = loadEdgeConfig(process.env);
  const app = await createEdgeApp(config);
  app.enableShutdownHooks();
  await app.listen(config.edge.port, config.edge.host);
  new Logger('Edge').log(`MCP edge listening on ${await app.getUrl()}/mcp`);
}

bootstrap().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
