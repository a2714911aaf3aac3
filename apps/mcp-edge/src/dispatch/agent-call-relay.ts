import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ClientCapabilities,
  ErrorCode,
  LoggingLevel,
  ProgressToken,
  RequestId,
  ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { Principal } from '@tollgate/identity';
import { ClientRequestError, UpstreamCallRelay, undeclaredCapability } from '@tollgate/mcp-client';
import { McpSession } from '../session/mcp-session.store';
import { AgentRequests } from './agent-requests.service';

const LOG_LEVELS: LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/**
 * Whether a `tools/call` (or `prompts/get`, or a 2025-11-25 `tasks/result`, on whose stream a task
 * asks for input) needs an answer stream to its agent rather than one JSON body: a call asked for
 * progress, or its session can be sent something during it (the client answers sampling,
 * elicitation or roots requests, or set a log level). Such a call leaves the lean path.
 */
export function callNeedsStream(body: unknown, session: McpSession | null): boolean {
  const method = (body as { method?: unknown } | null)?.method;
  if (method !== 'tools/call' && method !== 'prompts/get' && method !== 'tasks/result') return false;
  if (
    session &&
    (session.sampling || session.elicitationForm || session.elicitationUrl || session.roots || session.logLevel)
  )
    return true;
  if (method !== 'tools/call') return false;
  const params = (body as { params?: { _meta?: { progressToken?: unknown }; task?: unknown } } | null)?.params;
  // A 2025-11-25 task augmentation is answered by the SDK path (a CreateTaskResult).
  return params?._meta?.progressToken !== undefined || params?.task !== undefined;
}

/** The agent's end of one call on the SDK path: its request, its answer stream and what its client declared. */
export interface AgentCallStream {
  principal: Principal;
  session: McpSession | null;
  requestId: RequestId;
  progressToken: ProgressToken | undefined;
  /** The call's 2025-11-25 task augmentation (`params.task`), passed on to the upstream. */
  task?: { ttl?: number };
  transport: Transport;
  sendNotification: (n: ServerNotification) => Promise<void>;
  /** Ends when the call ends (its result sent, cancelled, or the agent gone). */
  signal: AbortSignal;
}

/**
 * What the upstream sends during a call, relayed on the call's answer stream: progress under the
 * agent's own token, log messages at or above the session's level, and the upstream's requests to
 * the client when it declared the capability (else the upstream gets a JSON-RPC error saying so).
 */
export function agentCallRelay(requests: AgentRequests, call: AgentCallStream): UpstreamCallRelay {
  const notify = (n: ServerNotification) => void call.sendNotification(n).catch(() => undefined);
  const token = call.progressToken;
  const minLevel = call.session?.logLevel ? LOG_LEVELS.indexOf(call.session.logLevel) : 0;
  return {
    clientCapabilities: declaredCapabilitiesOf(call.session),
    ...(call.task ? { task: call.task } : {}),
    progress:
      token === undefined
        ? undefined
        : (p) => notify({ method: 'notifications/progress', params: { ...p, progressToken: token } }),
    log: (params) => {
      if (LOG_LEVELS.indexOf(params.level) >= minLevel) notify({ method: 'notifications/message', params });
    },
    request: async (method, params, upstreamSignal) => {
      const missing = missingCapability(method, params, call.session);
      if (missing) throw undeclaredCapability(method, missing);
      const signal = AbortSignal.any([upstreamSignal, call.signal]);
      try {
        return await requests.ask(
          call.transport,
          call.principal,
          call.session?.id,
          call.requestId,
          method,
          params,
          signal,
        );
      } catch (err) {
        if (err instanceof ClientRequestError) throw err;
        throw new ClientRequestError(
          ErrorCode.InternalError,
          `Tollgate could not relay ${method} to the agent: ${(err as Error).message}`,
        );
      }
    },
  };
}

/** What the session's client declared at initialize, of what an upstream may ask it during a call. */
function declaredCapabilitiesOf(session: McpSession | null): ClientCapabilities {
  if (!session) return {};
  const elicitation = {
    ...(session.elicitationForm ? { form: {} } : {}),
    ...(session.elicitationUrl ? { url: {} } : {}),
  };
  return {
    ...(session.sampling ? { sampling: {} } : {}),
    ...(Object.keys(elicitation).length > 0 ? { elicitation } : {}),
    ...(session.roots ? { roots: {} } : {}),
  };
}

function missingCapability(
  method: string,
  params: Record<string, unknown> | undefined,
  session: McpSession | null,
): string | null {
  switch (method) {
    case 'sampling/createMessage':
      return session?.sampling ? null : 'sampling';
    case 'elicitation/create':
      if (params?.mode === 'url') return session?.elicitationUrl ? null : 'elicitation (URL mode)';
      return session?.elicitationForm ? null : 'elicitation (form mode)';
    case 'roots/list':
      return session?.roots ? null : 'roots';
    default:
      return method;
  }
}
