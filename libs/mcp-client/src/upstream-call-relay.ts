import { AsyncLocalStorage } from 'node:async_hooks';
import type { ClientCapabilities, LoggingMessageNotification, Progress } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { UPSTREAM_CLIENT_CAPABILITIES } from './upstream-client-capabilities';

/** The requests an upstream may make of the agent's client during a call. */
export const RELAYED_CLIENT_REQUESTS = new Set(['sampling/createMessage', 'elicitation/create', 'roots/list']);

/**
 * What the pooled connections declare to an upstream: the relayed requests' capabilities. A request
 * the agent's client cannot answer gets a JSON-RPC error naming why.
 */
export const POOLED_CLIENT_CAPABILITIES: ClientCapabilities = { ...UPSTREAM_CLIENT_CAPABILITIES, roots: {} };

/**
 * The agent's side of one tool call, for what the upstream sends during it: progress (already for
 * the agent's own progress token), log messages, and requests to the agent's client.
 */
export interface UpstreamCallRelay {
  /**
   * What the agent's client declared it can be asked (per session on 2025-11-25, per request on
   * 2026-07-28): what a 2026-07-28 upstream is told as the request's client capabilities.
   */
  clientCapabilities?: ClientCapabilities;
  /**
   * A 2025-11-25 agent's task augmentation of its `tools/call` (`params.task`): passed on to a
   * 2025-11-25 upstream, which may then answer a CreateTaskResult.
   */
  task?: { ttl?: number };
  /** Set when the agent asked for progress; the upstream is then asked for it too. */
  progress?: (progress: Progress) => void;
  log(params: LoggingMessageNotification['params']): void;
  /**
   * Asks the agent's client; rejects with a `ClientRequestError` the upstream gets as its answer.
   * `inputKey`: the name a 2026-07-28 upstream gave the request in its `inputRequests`.
   */
  request(
    method: string,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
    inputKey?: string,
  ): Promise<Record<string, unknown>>;
  /** The upstream refused the request for client capabilities the agent did not declare (-32021). */
  refused?(requiredCapabilities: Record<string, Record<string, unknown>>): void;
}

/**
 * The relay of the call running in this async context. The edge sets it around a call that has a
 * stream to the agent; the upstream pool reads it where the upstream is called, so the layers in
 * between (disclosure, policy, pricing, admission) carry nothing new.
 */
const CALL_RELAY = new AsyncLocalStorage<UpstreamCallRelay>();

export function runWithCallRelay<T>(relay: UpstreamCallRelay, fn: () => Promise<T>): Promise<T> {
  return CALL_RELAY.run(relay, fn);
}

export function currentCallRelay(): UpstreamCallRelay | undefined {
  return CALL_RELAY.getStore();
}

/**
 * A JSON-RPC error for the upstream's request, sent as is (an `McpError` would prefix its message
 * with "MCP error <code>:" once more at each hop).
 */
export class ClientRequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'ClientRequestError';
  }
}

const CAPABILITY_OF: Record<string, string> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};

/**
 * The client capability a request from an upstream needs, as the 2026-07-28 `requiredCapabilities`
 * names it (URL-mode elicitation needs its `url` sub-capability); null for a method that needs none.
 */
export function requiredCapability(request: {
  method: string;
  params?: Record<string, unknown>;
}): Record<string, Record<string, unknown>> | null {
  const capability = CAPABILITY_OF[request.method];
  if (!capability) return null;
  return { [capability]: capability === 'elicitation' && request.params?.mode === 'url' ? { url: {} } : {} };
}

/** Whether `caps` (2026-07-28 client capabilities) declare the capability and each sub-capability `required` names. */
export function declares(caps: Record<string, unknown>, required: Record<string, Record<string, unknown>>): boolean {
  return Object.entries(required).every(([name, sub]) => {
    const declared = caps[name];
    if (typeof declared !== 'object' || declared === null) return false;
    return Object.keys(sub).every((k) => k in declared);
  });
}

/** The error an upstream gets for a request no agent call can take. */
export function unrelayableRequest(method: string, why: string): ClientRequestError {
  return new ClientRequestError(ErrorCode.MethodNotFound, `Tollgate cannot relay ${method} to the agent: ${why}`);
}

/** The error for a request the calling agent's client did not declare the capability for. */
export function undeclaredCapability(method: string, capability = CAPABILITY_OF[method] ?? method): ClientRequestError {
  return unrelayableRequest(method, `the agent's client did not declare the ${capability} capability`);
}
