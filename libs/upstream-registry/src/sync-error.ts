import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { outboundExceptionIn } from '@tollgate/outbound';
import { CatalogException } from './catalog.exception';

/**
 * Why a sync failed, as the tenant may read it (`lastSyncError`, readable by members): the
 * outbound rule that refused the address, an HTTP status, an MCP error code or a network error
 * code, never text the upstream sent (an HTTP body, an error message), which could be an
 * internal service's answer.
 */
export function syncErrorMessage(err: unknown): string {
  const refused = outboundExceptionIn(err);
  if (refused) return refused.message;
  // Our own reasons (no connected user, too many pages) are ours to show.
  if (err instanceof CatalogException) return err.message;
  if (err instanceof StreamableHTTPError || err instanceof SseError) {
    const status = err.code;
    if (status === 401 || status === 403) return `the upstream refused Tollgate's credentials (HTTP ${status})`;
    if (typeof status === 'number' && status > 0) return `the upstream answered HTTP ${status}`;
    return `the upstream's answer is not MCP over ${err instanceof SseError ? 'SSE' : 'Streamable HTTP'}`;
  }
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) return 'the upstream did not answer in time';
    if (err.code === ErrorCode.ConnectionClosed) return 'the upstream closed the connection';
    return `the upstream answered MCP error ${err.code}${ErrorCode[err.code] ? ` (${ErrorCode[err.code]})` : ''}`;
  }
  const name = err instanceof Error ? err.name : typeof err;
  if (name === 'UnauthorizedError') return "the upstream refused Tollgate's credentials";
  if (name === 'ZodError' || name === 'SyntaxError') return "the upstream's answer is not a valid MCP message";
  const code = networkCodeIn(err);
  if (code) return `could not reach the upstream (${code})`;
  return `the sync failed (${name})`;
}

/** A Node system error code (ECONNREFUSED, ENOTFOUND...) in the error or its causes. */
function networkCodeIn(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z0-9_]+$/.test(code)) return code;
    if (typeof code === 'string' && code.startsWith('UND_ERR_')) return code;
  }
  return undefined;
}
