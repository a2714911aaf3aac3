import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { EdgeConfig } from '@tollgate/config';
import { EdgeModule } from './edge.module';
import { McpEndpoint, isMcpRequest } from './mcp/mcp-endpoint';

/**
 * Builds the edge app (not listening). `/mcp` is served by McpEndpoint straight off the Node HTTP
 * server; Express (through Nest) serves the rest: health, metrics, protected-resource metadata.
 * Body parsing is left to the MCP endpoint.
 */
export async function createEdgeApp(config: EdgeConfig): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(EdgeModule.forRoot(config), {
    bodyParser: false,
    logger: loggerLevels(config.log.level),
  });
  app.set('trust proxy', true);
  routeMcpAroundExpress(app.getHttpServer() as Server, app.get(McpEndpoint));
  return app;
}

/** Every request gets `x-request-id` (the caller's, if sane); /mcp goes to the endpoint, the rest to Express. */
function routeMcpAroundExpress(server: Server, mcp: McpEndpoint): void {
  const express = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const incoming = req.headers['x-request-id'];
    res.setHeader('x-request-id', typeof incoming === 'string' && incoming.length <= 128 ? incoming : randomUUID());
    if (isMcpRequest(req.url)) void mcp.handle(req, res);
    else for (const listener of express) listener(req, res);
  });
}

export function loggerLevels(level: EdgeConfig['log']['level']) {
  const order = ['error', 'warn', 'log', 'debug', 'verbose'] as const;
  return order.slice(0, order.indexOf(level) + 1) as ('error' | 'warn' | 'log' | 'debug' | 'verbose')[];
}
