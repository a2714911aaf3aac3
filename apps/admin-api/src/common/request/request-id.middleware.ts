import { randomUUID } from 'node:crypto';
import { runWithLogContext } from '@tollgate/observability';
import type { NextFunction, Request, Response } from 'express';

export const REQUEST_ID_HEADER = 'x-request-id';
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's request id if it is sane, else a fresh one. */
export function requestIdFrom(incoming: string | string[] | undefined): string {
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value && ACCEPTABLE_ID.test(value) ? value : randomUUID();
}

/** Every response carries `x-request-id`; logs and 500 bodies quote the same id. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const id = requestIdFrom(req.headers[REQUEST_ID_HEADER]);
  (req as Request & { requestId: string }).requestId = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  // Every log line written while serving the request carries its id.
  runWithLogContext({ requestId: id }, next);
}

export function requestIdOf(req: Request): string {
  return (req as Request & { requestId?: string }).requestId ?? 'unknown';
}
