import { Injectable, Logger } from '@nestjs/common';
import { ErrorCode, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Principal } from '@tollgate/identity';
import { mediaTypeOf, unavailableDependency } from '@tollgate/kernel';
import { CallDispatcher } from '../dispatch/call-dispatcher.service';
import { sendDependencyUnavailable } from '../endpoint/dependency-unavailable';
import { callNeedsStream } from '../dispatch/agent-call-relay';
import { sendJson } from '../endpoint/edge-auth';
import { McpSession } from '../session/mcp-session.store';

/** A `tools/call` the lean path can answer: one request, a JSON answer, nothing unusual. */
export interface LeanToolCall {
  id: string | number;
  name: string;
  args: Record<string, unknown> | undefined;
}

/**
 * The edge's most frequent request, a single `tools/call`, answered as one JSON body without
 * building an SDK Server and Streamable HTTP transport for it (a new Server, a web-stream bridge
 * and zod parses of the message cost about a millisecond of CPU per call). The tool call itself
 * goes through the same CallDispatcher as on the SDK path; this only adapts the wire format. Everything else - initialize, lists,
 * notifications, batches, streamed answers, unusual headers or malformed params - is left to the
 * SDK path, which owns those rules and their error answers.
 */
@Injectable()
export class LeanToolCallHandler {
  private readonly logger = new Logger(LeanToolCallHandler.name);

  constructor(private readonly dispatcher: CallDispatcher) {}

  /** The call, if this request can take the lean path; null sends it to the SDK. */
  accepts(req: IncomingMessage, body: unknown, session: McpSession | null): LeanToolCall | null {
    // A client that can open URLs gets streamed answers (a connect link may come before the result),
    // and so does a call that asked for progress or whose client can be asked things during it.
    if (session?.elicitationUrl || callNeedsStream(body, session)) return null;
    if (!acceptsBothAnswerKinds(req.headers.accept) || mediaTypeOf(req.headers['content-type']) !== 'application/json')
      return null;
    const version = req.headers['mcp-protocol-version'];
    if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)))
      return null;
    return leanToolCallOf(body);
  }

  async answer(
    res: ServerResponse,
    principal: Principal,
    session: McpSession | null,
    call: LeanToolCall,
  ): Promise<void> {
    // The agent hung up before its answer: the call (and the upstream's) is aborted. The dispatcher
    // aborts the same controller for a cancellation, which still gets its answer.
    const abort = new AbortController();
    let hungUp = false;
    const onClose = () => {
      hungUp = !res.writableFinished;
      if (hungUp) abort.abort();
    };
    // `on`, not `once`: a response closes once, and once's wrapper would be two more objects a call.
    res.on('close', onClose);
    let message: object;
    try {
      const result = await this.dispatcher.callTool(
        { principal, session, requestId: call.id, abort },
        call.name,
        call.args,
      );
      message = { result, jsonrpc: '2.0', id: call.id };
    } catch (err) {
      const dependency = unavailableDependency(err);
      if (dependency) {
        res.off('close', onClose);
        this.logger.warn(`tools/call ${call.name}: ${dependency} unavailable: ${(err as Error).message}`);
        if (!res.destroyed) sendDependencyUnavailable(res, dependency, call.id);
        return;
      }
      // The same JSON-RPC error the SDK would send for a handler that threw.
      const e = err as { code?: unknown; message?: string; data?: unknown };
      this.logger.error(`tools/call ${call.name} failed: ${e.message ?? String(err)}`);
      message = {
        jsonrpc: '2.0',
        id: call.id,
        error: {
          code: Number.isSafeInteger(e.code) ? e.code : ErrorCode.InternalError,
          message: e.message ?? 'Internal error',
          ...(e.data !== undefined ? { data: e.data } : {}),
        },
      };
    }
    res.off('close', onClose);
    // A cancelled call still ends its POST, with the CANCELLED result (the client ignores it).
    if (hungUp || res.destroyed) return;
    // With its length known (sendJson sets it), the head and the body leave in one plain write.
    sendJson(res, 200, message);
  }
}

/** Structural check of a single, well-formed `tools/call` request (the SDK validates anything else). */
export function leanToolCallOf(body: unknown): LeanToolCall | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const m = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  if (m.jsonrpc !== '2.0' || m.method !== 'tools/call') return null;
  if (!(typeof m.id === 'string' || (typeof m.id === 'number' && Number.isInteger(m.id)))) return null;
  if (typeof m.params !== 'object' || m.params === null || Array.isArray(m.params)) return null;
  const params = m.params as { name?: unknown; arguments?: unknown; task?: unknown };
  if (typeof params.name !== 'string') return null;
  // Task-augmented calls (params.task) need the SDK's task handling.
  if (params.task !== undefined) return null;
  const args = params.arguments;
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) return null;
  return { id: m.id, name: params.name, args: args as Record<string, unknown> | undefined };
}

function acceptsBothAnswerKinds(accept: string | undefined): boolean {
  // The SDK's rule: a client MUST list both; anything else gets its 406.
  return accept !== undefined && accept.includes('application/json') && accept.includes('text/event-stream');
}
