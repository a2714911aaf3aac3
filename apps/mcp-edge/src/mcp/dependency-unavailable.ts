import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { ServerResponse } from 'node:http';
import { DEPENDENCY_RETRY_AFTER_SECONDS, UnavailableDependency } from '@tollgate/kernel';
import { sendJson } from './edge-auth';

const WHAT: Record<UnavailableDependency, string> = { database: 'its database (Postgres)', redis: 'Redis' };

/** The JSON-RPC error of a request Tollgate cannot serve while a store it needs is down: not the caller's fault, retry later. */
export function dependencyUnavailableError(dependency: UnavailableDependency): { code: number; message: string; data: { dependency: UnavailableDependency; retryAfterSeconds: number } } {
  return {
    code: ErrorCode.InternalError,
    message: `Service unavailable: Tollgate cannot reach ${WHAT[dependency]}. Retry after ${DEPENDENCY_RETRY_AFTER_SECONDS} s.`,
    data: { dependency, retryAfterSeconds: DEPENDENCY_RETRY_AFTER_SECONDS },
  };
}

/** 503 with Retry-After and the JSON-RPC error, for a whole /mcp request. */
export function sendDependencyUnavailable(res: ServerResponse, dependency: UnavailableDependency, id: string | number | null): void {
  sendJson(res, 503, { jsonrpc: '2.0', id, error: dependencyUnavailableError(dependency) }, { 'Retry-After': String(DEPENDENCY_RETRY_AFTER_SECONDS) });
}
