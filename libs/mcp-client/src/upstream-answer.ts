import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

// The SDK raises its own timeouts (-32001) and closed connections (-32000) as `McpError`s with the
// very codes an upstream may answer for its own reasons: the answers the upstream gave are marked.
const ANSWERED = new WeakSet<McpError>();

/** The `McpError` for a JSON-RPC error the upstream answered, marked as its answer. */
export function upstreamAnswerError(code: number, message: string, data?: unknown): McpError {
  const err = McpError.fromError(code, message, data);
  ANSWERED.add(err);
  return err;
}

/** True if `err` is a JSON-RPC error the upstream answered, not one raised here for a failed exchange. */
export function isUpstreamAnswer(err: McpError): boolean {
  if (ANSWERED.has(err)) return true;
  // Every other code only ever comes from an answer.
  return err.code !== ErrorCode.RequestTimeout && err.code !== ErrorCode.ConnectionClosed;
}

/**
 * Runs an exchange through the SDK client, which raises its own timeouts and closed connections with
 * the codes an upstream may answer: one that came back before the timeout, while the connection is
 * still up, was the upstream's answer.
 */
export async function throughSdkClient<T>(client: Client, timeoutMs: number, exchange: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await exchange();
  } catch (err) {
    if (
      err instanceof McpError &&
      !ANSWERED.has(err) &&
      client.transport !== undefined &&
      (err.code === ErrorCode.ConnectionClosed ||
        (err.code === ErrorCode.RequestTimeout && performance.now() - started < timeoutMs))
    )
      ANSWERED.add(err);
    throw err;
  }
}
