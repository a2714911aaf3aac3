import { UpstreamCallRelay } from './upstream-call-relay';

/** One request of the 2026-07-28 revision: its id, the JSON-RPC message, and the HTTP routing headers. */
export interface StatelessWireRequest {
  id: string;
  message: { jsonrpc: '2.0'; id: string; method: string; params: Record<string, unknown> };
  /** `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` and the upstream's own headers: HTTP only. */
  headers: Record<string, string>;
}

export type JsonRpcAnswer =
  { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } };

/** A notification on a `subscriptions/listen` stream (its acknowledgment first). */
export type ListenMessage = { method?: unknown; params?: { uri?: unknown } };

/**
 * How a 2026-07-28 client reaches its upstream: a POST per request (Streamable HTTP), or
 * newline-delimited JSON-RPC on one spawned process (stdio).
 */
export interface StatelessWire {
  /** Whether the upstream reads the routing headers (`Mcp-Param-*` need the tool list to be known). */
  readonly routingHeaders: boolean;
  /**
   * Sends one request and resolves with its answer; meanwhile progress under the request's token,
   * and log messages, go to `relay`. Aborting `signal` gives up on the answer.
   */
  exchange(
    request: StatelessWireRequest,
    relay: UpstreamCallRelay | undefined,
    signal: AbortSignal,
  ): Promise<JsonRpcAnswer>;
  /** Opens a `subscriptions/listen` stream; resolves when it ends (or `signal` aborts it). */
  listen(
    request: StatelessWireRequest,
    signal: AbortSignal,
    onMessage: (message: ListenMessage) => void,
  ): Promise<void>;
  /** Told once when the wire can carry nothing more (a stdio process exited). */
  onclose?: () => void;
  close(): Promise<void>;
}

/** The answer to request `id` in `message`, if it is one. */
export function answerOf(message: unknown, id: string): JsonRpcAnswer | undefined {
  const m = message as Record<string, unknown> | null;
  if (typeof m !== 'object' || m === null || (m.id !== id && m.id !== null)) return undefined;
  if (typeof m.result === 'object' && m.result !== null) return { result: m.result as Record<string, unknown> };
  const error = m.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
  if (error && typeof error.code === 'number')
    return { error: { code: error.code, message: String(error.message ?? ''), data: error.data } };
  return undefined;
}

/** A progress notification's progress for the relay (without the token and `_meta`), if it is one. */
export function relayedProgressOf(
  params: Record<string, unknown>,
): { progress: number; total?: number; message?: string } | undefined {
  if (typeof params.progress !== 'number') return undefined;
  const { progressToken: _token, _meta: _ignored, ...progress } = params;
  return progress as { progress: number; total?: number; message?: string };
}

/**
 * Progress under the request's own token `id`, and log messages, go to the request's relay; true
 * if `method` was one of them (an answer stream's other messages are the answer, or ignored).
 */
export function relayToRequest(
  method: unknown,
  params: Record<string, unknown>,
  id: string,
  relay: UpstreamCallRelay | undefined,
): boolean {
  if (method === 'notifications/progress') {
    const progress = params.progressToken === id ? relayedProgressOf(params) : undefined;
    if (progress) relay?.progress?.(progress);
    return progress !== undefined;
  }
  if (method !== 'notifications/message' || typeof params.level !== 'string') return false;
  relay?.log(params as never);
  return true;
}
