import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { AdminConfig } from '@tollgate/config';
import type { Clock } from '@tollgate/kernel';
import { createNamedApp, ShutdownDrain } from '@tollgate/observability';
import type { NextFunction, Request, Response } from 'express';
import type { Server } from 'node:http';
import { AdminMetrics } from './health/admin-metrics.service';
import { AdminApiModule } from './admin-api.module';
import { findConsoleDir, mountConsole } from './console/console-static';
import { jsonBodyMiddleware, queryInputMiddleware } from './common/request/json-body.middleware';
import { requestIdMiddleware } from './common/request/request-id.middleware';
import { requestLogMiddleware } from './common/request/request-log.middleware';

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
 * and `listen` are the caller's business. `clock`: what it reads as now (tests pass a TestClock).
 */
export async function createAdminApp(config: AdminConfig, clock?: Clock): Promise<INestApplication> {
  const app = await createNamedApp({ app: 'admin-api', ...config.log }, (logger) =>
    NestFactory.create<NestExpressApplication>(AdminApiModule.forRoot(config, clock), {
      logger,
      // Our own JSON parser (below) names the body in a 400 for malformed JSON.
      bodyParser: false,
    }),
  );
  app.disable('x-powered-by');
  app.use(requestIdMiddleware);
  app.use(requestLogMiddleware);
  const metrics = app.get(AdminMetrics);
  app.use((req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = (req.route as { path?: string } | undefined)?.path;
      metrics.recordRequest(req.method, route, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  });
  app.get(ShutdownDrain).attach(app.getHttpServer() as Server);
  app.use(queryInputMiddleware);
  app.use(jsonBodyMiddleware);
  // The web console (dist/console) at /console/, same origin as the API it calls.
  mountConsole(app, config.admin.consoleDir ?? findConsoleDir());
  setupOpenApi(app, config);
  await app.init();
  return app;
}
