import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

/** A JSON-RPC error for a body the edge refuses before serving any of it. */
export interface JsonRpcRefusal {
  code: ErrorCode.InvalidRequest | ErrorCode.InvalidParams;
  message: string;
  /** The request's id when it is a single request with a usable id, else null. */
  id: string | number | null;
}

/**
 * Checks the shape of a JSON-RPC body (one message or a batch) before anything runs: an empty
 * batch, a message that is not JSON-RPC 2.0, one id used twice in a batch (both would run and be
 * charged, one answered), or params that are not an object (MCP's params are always objects).
 */
export function jsonRpcRefusal(body: unknown): JsonRpcRefusal | null {
  if (!Array.isArray(body)) return messageRefusal(body, null);
  // JSON-RPC 2.0: "an empty Array" is an Invalid Request.
  if (body.length === 0)
    return { code: ErrorCode.InvalidRequest, message: 'Invalid Request: an empty batch', id: null };
  const seen = new Set<string>();
  for (let i = 0; i < body.length; i++) {
    const refused = messageRefusal(body[i], i);
    if (refused) return refused;
    const m = body[i] as { method?: unknown; id?: unknown };
    // Requests only: a notification has no id, and the client's responses answer our ids.
    if (typeof m.method !== 'string' || m.id === undefined) continue;
    const key = `${typeof m.id}:${String(m.id)}`;
    if (seen.has(key))
      return {
        code: ErrorCode.InvalidRequest,
        message: `Invalid Request: the batch uses the request id ${JSON.stringify(m.id)} more than once`,
        id: null,
      };
    seen.add(key);
  }
  return null;
}

function messageRefusal(message: unknown, index: number | null): JsonRpcRefusal | null {
  const where = index === null ? 'the message' : `message ${index} of the batch`;
  const invalid = (why: string): JsonRpcRefusal => ({
    code: ErrorCode.InvalidRequest,
    message: `Invalid Request: ${where} ${why}`,
    id: null,
  });
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return invalid('is not a JSON object');
  const m = message as {
    jsonrpc?: unknown;
    id?: unknown;
    method?: unknown;
    params?: unknown;
    result?: unknown;
    error?: unknown;
  };
  if (m.jsonrpc !== '2.0') return invalid('must have "jsonrpc": "2.0"');
  if (m.id !== undefined && typeof m.id !== 'string' && !(typeof m.id === 'number' && Number.isFinite(m.id)))
    return invalid('has an id that is neither a string nor a number');
  if (m.method === undefined)
    return m.id !== undefined && (m.result !== undefined || m.error !== undefined)
      ? null
      : invalid('is neither a request nor a response');
  if (typeof m.method !== 'string') return invalid('has a method that is not a string');
  if (m.params !== undefined && (typeof m.params !== 'object' || m.params === null || Array.isArray(m.params))) {
    const id = index === null && m.id !== undefined ? (m.id as string | number) : null;
    return {
      code: ErrorCode.InvalidParams,
      message: `Invalid params: the params of ${where} ("${m.method}") must be an object`,
      id,
    };
  }
  return null;
}
