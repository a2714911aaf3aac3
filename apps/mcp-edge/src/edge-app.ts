import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { EdgeConfig } from '@tollgate/config';
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { EdgeModule } from './edge.module';

/** Builds the edge app (not listening). Body parsing is left to the MCP SDK transport. */
export async function createEdgeApp(config: EdgeConfig): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(EdgeModule.forRoot(config), {
    bodyParser: false,
    logger: loggerLevels(config.log.level),
  });
  app.set('trust proxy', true);
  app.use((req: Request, res: Response, next: NextFunction) => {
    const incoming = req.headers['x-request-id'];
    res.setHeader('x-request-id', typeof incoming === 'string' && incoming.length <= 128 ? incoming : randomUUID());
    next();
  });
  return app;
}

export function loggerLevels(level: EdgeConfig['log']['level']) {
  const order = ['error', 'warn', 'log', 'debug', 'verbose'] as const;
  return order.slice(0, order.indexOf(level) + 1) as ('error' | 'warn' | 'log' | 'debug' | 'verbose')[];
}
