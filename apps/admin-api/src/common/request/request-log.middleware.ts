import { Logger } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { requestIdOf } from './request-id.middleware';

const logger = new Logger('HTTP');

/**
 * One line per request: method, path (without the query string, which could carry a
 * credential a client put there), status, duration and request id. Never headers or bodies.
 */
export function requestLogMiddleware(req: Request, res: Response, next: NextFunction): void {
  const started = process.hrtime.bigint();
  res.on('finish', () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const actor = (req as Request & { user?: { tokenId?: string } }).user?.tokenId ?? '-';
    const line = `${req.method} ${req.path} ${res.statusCode} ${ms.toFixed(1)}ms requestId=${requestIdOf(req)} actor=${actor}`;
    if (res.statusCode >= 500) logger.error(line);
    else if (req.path === '/healthz' || req.path === '/readyz') logger.debug(line);
    else logger.log(line);
  });
  next();
}
