import { INestApplication, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { AdminConfig } from '@tollgate/config';
import { AdminApiModule } from './admin-api.module';
import { findConsoleDir, mountConsole } from './console/console-static';
import { jsonBodyMiddleware, queryInputMiddleware } from './common/json-body.middleware';
import { requestIdMiddleware } from './common/request-id.middleware';
import { requestLogMiddleware } from './common/request-log.middleware';

const LOG_LEVELS: LogLevel[] = ['error', 'warn', 'log', 'debug', 'verbose'];

/** The levels at or above the configured one (`log` -> error, warn, log). */
export function logLevelsUpTo(level: AdminConfig['log']['level']): LogLevel[] {
  return LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(level) + 1);
}

function setupOpenApi(app: INestApplication, config: AdminConfig): void {
  const builder = new DocumentBuilder()
    .setTitle('Tollgate admin API')
    .setDescription(
      'Organisations, teams, users, virtual keys, upstream MCP servers, access policies, prices, budgets and the audit trail. ' +
        'Authenticate with `Authorization: Bearer <admin token>`. Money is integer micro-units (1 USD = 1,000,000) as JSON integers.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An admin token (tga_…) or the bootstrap token' });
  if (config.admin.publicUrl) builder.addServer(config.admin.publicUrl);
  SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, builder.build()), {
    jsonDocumentUrl: 'docs-json',
    swaggerOptions: { persistAuthorization: false },
  });
}

/**
 * Builds the admin API, fully set up and initialised (database and Redis connected, routes,
 * validation, error mapping, OpenAPI at /docs and /docs-json) but not listening. Shutdown hooks
 * and `listen` are the caller's business.
 */
export async function createAdminApp(config: AdminConfig): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AdminApiModule.forRoot(config), {
    logger: logLevelsUpTo(config.log.level),
    // Our own JSON parser (below) names the body in a 400 for malformed JSON.
    bodyParser: false,
  });
  app.disable('x-powered-by');
  app.use(requestIdMiddleware);
  app.use(requestLogMiddleware);
  app.use(queryInputMiddleware);
  app.use(jsonBodyMiddleware);
  // The web console (dist/console) at /console/, same origin as the API it calls.
  mountConsole(app, config.admin.consoleDir ?? findConsoleDir());
  setupOpenApi(app, config);
  await app.init();
  return app;
}
