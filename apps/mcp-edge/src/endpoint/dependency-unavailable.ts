import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ServerResponse } from 'node:http';
import { DEPENDENCY_RETRY_AFTER_SECONDS, UnavailableDependency, unavailableDependency } from '@tollgate/kernel';
import { sendJson } from './edge-auth';

const WHAT: Record<UnavailableDependency, string> = { database: 'its database (Postgres)', redis: 'Redis' };

/** The JSON-RPC error of a request Tollgate cannot serve while a store it needs is down: not the caller's fault, retry later. */
export function dependencyUnavailableError(dependency: UnavailableDependency): {
  code: number;
  message: string;
  data: { dependency: UnavailableDependency; retryAfterSeconds: number };
} {
  return {
    code: ErrorCode.InternalError,
    message: `Service unavailable: Tollgate cannot reach ${WHAT[dependency]}. Retry after ${DEPENDENCY_RETRY_AFTER_SECONDS} s.`,
    data: { dependency, retryAfterSeconds: DEPENDENCY_RETRY_AFTER_SECONDS },
  };
}

/** 503 with Retry-After and the JSON-RPC error, for a whole /mcp request. */
export function sendDependencyUnavailable(
  res: ServerResponse,
  dependency: UnavailableDependency,
  id: string | number | null,
): void {
  sendJson(
    res,
    503,
    { jsonrpc: '2.0', id, error: dependencyUnavailableError(dependency) },
    { 'Retry-After': String(DEPENDENCY_RETRY_AFTER_SECONDS) },
  );
}

/**
 * For a message the SDK answers (in a batch, a list, a streamed call): a dependency outage becomes
 * that message's JSON-RPC error with the retry hint (the SDK keeps McpError's code and data);
 * anything else is rethrown as it is.
 */
export function rethrowAsProtocolError(err: unknown): never {
  const dependency = unavailableDependency(err);
  if (!dependency) throw err;
  const e = dependencyUnavailableError(dependency);
  throw new McpError(e.code, e.message, e.data);
}
