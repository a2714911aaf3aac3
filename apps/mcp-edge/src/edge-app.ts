import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AdmissionClock } from '@tollgate/admission';
import { EdgeConfig } from '@tollgate/config';
import {
  createNamedApp,
  inHttpServerSpan,
  runWithLogContext,
  ShutdownDrain,
  traceCarrierOf,
} from '@tollgate/observability';
import { EdgeModule } from './edge.module';
import { McpEndpoint, isMcpRequest } from './endpoint/mcp-endpoint';

/**
 * Builds the edge app (not listening). `/mcp` is served by McpEndpoint straight off the Node HTTP
 * server; Express (through Nest) serves the rest: health, metrics, protected-resource metadata.
 * Body parsing is left to the MCP endpoint. `clock`: what it reads as now (tests pass a TestClock).
 */
export async function createEdgeApp(config: EdgeConfig, clock?: AdmissionClock): Promise<INestApplication> {
  const app = await createNamedApp({ app: 'edge', ...config.log }, (logger) =>
    // forceCloseConnections: closing the app ends the connections still open (an agent's GET stream,
    // a kept-alive socket) instead of waiting for their clients to leave; main.ts drains before that.
    NestFactory.create<NestExpressApplication>(EdgeModule.forRoot(config, clock), {
      bodyParser: false,
      logger,
      forceCloseConnections: true,
    }),
  );
  app.set('trust proxy', true);
  routeMcpAroundExpress(app.getHttpServer() as Server, app.get(McpEndpoint));
  app.get(ShutdownDrain).attach(app.getHttpServer() as Server);
  return app;
}

// Probes and scrapes are not traffic: no span.
const PROBES = /^\/(healthz|readyz|metrics)\b/;

/** Every request gets `x-request-id` (the caller's, if sane); /mcp goes to the endpoint, the rest to Express. */
function routeMcpAroundExpress(server: Server, mcp: McpEndpoint): void {
  const express = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && incoming.length <= 128 ? incoming : randomUUID();
    res.setHeader('x-request-id', requestId);
    // Every log line written while serving the request carries its id (and later its org, key and call).
    const log = {
      requestId,
      trace: { carrier: traceCarrierOf(req.headers as Record<string, unknown>), fromMeta: false },
    };
    if (isMcpRequest(req.url)) inHttpServerSpan(req, res, '/mcp', log, () => void mcp.handle(req, res));
    else if (PROBES.test(req.url ?? '')) runWithLogContext(log, () => express.forEach((l) => l(req, res)));
    else inHttpServerSpan(req, res, undefined, log, () => express.forEach((l) => l(req, res)));
  });
}
