import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Principal, PrincipalResolver } from '@tollgate/identity';
import { unavailableDependency } from '@tollgate/kernel';
import { addToLogContext, currentLogContext, traceCarrierOf } from '@tollgate/observability';
import { RedisService } from '@tollgate/redis';
import { AnswerStreamResumption } from '../answer-streams/answer-stream-resumption';
import { McpSession, McpSessionStore, sessionClientOf } from '../session/mcp-session.store';
import { SessionHub } from '../session/session-hub.service';
import { VisibleListWatch } from '../session/visible-list-watch.service';
import { sendDependencyUnavailable } from './dependency-unavailable';
import { AgentRequests, onlyAgentAnswers } from '../dispatch/agent-requests.service';
import { callNeedsStream } from '../dispatch/agent-call-relay';
import { bearerToken, isAllowedHost, refusalOf, sendJson, sendOrgDisabled, sendUnauthorized } from './edge-auth';
import { HostileInputAllowance } from './hostile-input-allowance.service';
import { readJsonBody } from './json-body';
import { jsonRpcRefusal } from './json-rpc-message-check';
import { LeanToolCallHandler } from '../transports/lean-tool-call.handler';
import { inSpan, spansMade } from '../governed-call/call-tracing';
import { McpServerFactory } from '../transports/mcp-server.factory';
import { isStatelessRevisionRequest } from '../transports/stateless-revision';
import { StatelessRevisionHandler } from '../transports/stateless-revision.handler';
import { ThrottledAnswerHold } from './throttled-answer-hold';

// The auth span's attributes: none, one object for every request.
const NO_ATTRIBUTES = Object.freeze({});

/** The path agents talk MCP on. */
export const MCP_PATH = '/mcp';

/** Whether a request targets the MCP endpoint: `/mcp`, any case, an optional trailing slash and query (as Express matched it). */
export function isMcpRequest(url: string | undefined): boolean {
  if (url === undefined || url.length < MCP_PATH.length || url.slice(0, MCP_PATH.length).toLowerCase() !== MCP_PATH)
    return false;
  let rest = url.slice(MCP_PATH.length);
  if (rest.startsWith('/')) rest = rest.slice(1);
  return rest === '' || rest.startsWith('?');
}

/**
 * MCP Streamable HTTP at /mcp, served on the plain Node request and response: the edge's hot path
 * does not go through Express routing or Nest's router (they cost as much CPU per call as the
 * governance itself). Authenticate the virtual key, then answer a plain `tools/call` on the lean
 * path and hand everything else to the SDK transport.
 * An `initialize` opens a session (its id in `Mcp-Session-Id`, its state in Redis, so any replica
 * serves it); requests without a session id are served statelessly.
 */
@Injectable()
export class McpEndpoint {
  private readonly logger = new Logger(McpEndpoint.name);
  private readonly throttledAnswers = new ThrottledAnswerHold();

  constructor(
    private readonly principals: PrincipalResolver,
    private readonly servers: McpServerFactory,
    private readonly sessions: McpSessionStore,
    private readonly hub: SessionHub,
    private readonly leanToolCalls: LeanToolCallHandler,
    private readonly agentRequests: AgentRequests,
    private readonly statelessRevision: StatelessRevisionHandler,
    private readonly redis: RedisService,
    private readonly hostileInput: HostileInputAllowance,
    private readonly listWatch: VisibleListWatch,
    private readonly answerStreams: AnswerStreamResumption,
    @Inject(TOLLGATE_CONFIG) private readonly config: EdgeConfig,
  ) {}

  /** Serves one request; never rejects (a failure is a JSON-RPC error answer). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await this.serve(req, res);
    } catch (err) {
      const dependency = unavailableDependency(err);
      this.logger.error(
        `mcp request failed${dependency ? ` (${dependency} unavailable)` : ''}: ${(err as Error).message}`,
      );
      if (res.headersSent) res.end();
      else if (dependency) sendDependencyUnavailable(res, dependency, null);
      else sendJson(res, 500, { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
    }
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!isAllowedHost(req, this.config.edge.allowedHosts)) {
      return sendJson(res, 403, {
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Forbidden: Host or Origin not allowed' },
        id: null,
      });
    }
    // Redis known down: refuse before anything runs (a call could reach the upstream and then not be recorded).
    if (this.redis.client.status !== 'ready') return sendDependencyUnavailable(res, 'redis', null);
    const secret = bearerToken(req);
    if (!secret) return sendUnauthorized(req, res, this.config.edge.publicUrl, 'missing');
    // A key seen before is resolved from the cache without a promise, unless its step makes a span.
    const credential =
      (!spansMade() && this.principals.cachedCredential(secret)) ||
      (await inSpan('tollgate.auth', NO_ATTRIBUTES, () => this.principals.resolveCredential(secret)));
    if (!credential.ok && credential.reason === 'org-disabled') return sendOrgDisabled(res);
    if (!credential.ok) return sendUnauthorized(req, res, this.config.edge.publicUrl, refusalOf(secret));
    const principal = credential.principal;
    addToLogContext({ orgId: principal.orgId, keyId: principal.keyId });

    const sessionHeader = req.headers['mcp-session-id'];
    const sessionId = typeof sessionHeader === 'string' ? sessionHeader : undefined;
    if (req.method === 'GET' || req.method === 'DELETE')
      return this.serveSessionRequest(req, res, principal, sessionId);
    if (req.method !== 'POST') {
      return sendJson(
        res,
        405,
        { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed' }, id: null },
        { Allow: 'GET, POST, DELETE' },
      );
    }

    // A key past its allowance of refused input is answered (after a hold) before its body is read.
    const blockedMs = this.hostileInput.blockedForMs(principal.keyId);
    if (blockedMs > 0)
      return this.throttledAnswers.answerLater(principal.keyId, res, blockedMs, () =>
        sendHostileInputThrottled(req, res, blockedMs),
      );
    // The body is read here (not by the SDK) to see whether it opens a session.
    const body = await readJsonBody(req);
    if (!body.ok) {
      // Counted (on every edge) before the answer, so the key's next request finds it counted.
      await this.hostileInput.recordRefusal(principal.keyId);
      const close = body.unread && !drainSmallBody(req);
      return sendJson(
        res,
        body.status,
        { jsonrpc: '2.0', error: { code: body.code, message: body.message }, id: null },
        close ? { Connection: 'close' } : {},
        close ? () => req.socket.destroy() : undefined,
      );
    }
    noteRequestTrace(body.value, sessionId);
    const refused = jsonRpcRefusal(body.value);
    if (refused)
      return sendJson(res, 400, {
        jsonrpc: '2.0',
        error: { code: refused.code, message: refused.message },
        id: refused.id,
      });
    // 2026-07-28: no session, every request stands alone.
    if (isStatelessRevisionRequest(req, body.value))
      return this.statelessRevision.answer(req, res, principal, body.value);
    let session: McpSession | null = null;
    if (sessionId) {
      session = await this.sessions.getSession(principal, sessionId);
      if (!session) return sendSessionNotFound(res);
    } else if (isInitialize(body.value)) {
      session = await this.sessions.createSession(principal, sessionClientOf(body.value));
    }
    if (session) res.setHeader('Mcp-Session-Id', session.id);
    // The agent's answers to requests relayed to it during a call go to the edge that waits for them
    // (asked first without a promise: nearly every request is no answer).
    if (onlyAgentAnswers(body.value) && (await this.agentRequests.deliver(principal, session?.id, body.value))) {
      res.writeHead(202).end();
      return;
    }

    const leanCall = this.leanToolCalls.accepts(req, body.value, session);
    if (leanCall) return this.leanToolCalls.answer(res, principal, session, leanCall);

    const server = this.servers.createServer(principal, session);
    // Clients that can open URLs get streamed answers, so a call can offer a link before its result.
    const streamed = session?.elicitationUrl || callNeedsStream(body.value, session);
    // A streamed answer is resumable: its events are kept in Redis for a reconnect to any edge.
    const resumable = streamed ? this.answerStreams.resumable(principal) : undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !streamed,
      ...resumable,
    });
    res.on('close', () =>
      this.answerStreams.closeWhenAnswered(resumable, () => {
        void transport.close();
        void server.close();
      }),
    );
    await server.connect(transport);
    await transport.handleRequest(req, res, body.value);
  }

  /**
   * GET opens the session's notification stream, or with `Last-Event-ID` resumes an answer stream;
   * DELETE ends the session. Both need a session, but for a resumption.
   */
  private async serveSessionRequest(
    req: IncomingMessage,
    res: ServerResponse,
    principal: Principal,
    sessionId: string | undefined,
  ): Promise<void> {
    // A broken answer stream resumed (its key is checked against the stream's, no session needed).
    const lastEventId = req.headers['last-event-id'];
    if (req.method === 'GET' && typeof lastEventId === 'string' && lastEventId !== '') {
      if (sessionId && !(await this.sessions.getSession(principal, sessionId))) return sendSessionNotFound(res);
      return this.answerStreams.resume(principal, lastEventId, res, sessionId);
    }
    if (!sessionId) {
      return sendJson(
        res,
        405,
        { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed without an Mcp-Session-Id' }, id: null },
        { Allow: 'POST' },
      );
    }
    if (req.method === 'DELETE') {
      if (!(await this.sessions.deleteSession(principal, sessionId))) return sendSessionNotFound(res);
      res.writeHead(200).end();
      return;
    }
    const session = await this.sessions.getSession(principal, sessionId);
    if (!session) return sendSessionNotFound(res);
    this.hub.attachStream(session.id, res);
    // Catalog and policy changes reach this stream when they change what its key sees.
    const unwatch = this.listWatch.watch(principal, session.id, (kinds) => this.hub.sendListsChanged(res, kinds));
    res.on('close', unwatch);
  }
}

/**
 * The JSON-RPC id and session of a single request, and the trace context of its `params._meta`
 * when it carries one (it then wins over the headers'), for the call's span and its upstream.
 */
function noteRequestTrace(body: unknown, sessionId: string | undefined): void {
  const trace = currentLogContext()?.trace;
  if (!trace || typeof body !== 'object' || body === null || Array.isArray(body)) return;
  const { id, params } = body as { id?: unknown; params?: { _meta?: Record<string, unknown> } };
  if (typeof id === 'string' || typeof id === 'number') trace.jsonRpcId = id;
  trace.sessionId = sessionId;
  const fromMeta = traceCarrierOf(typeof params?._meta === 'object' ? params._meta : undefined);
  if (fromMeta.traceparent) {
    trace.carrier = fromMeta;
    trace.fromMeta = true;
  }
}

function isInitialize(body: unknown): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    !Array.isArray(body) &&
    (body as { method?: unknown }).method === 'initialize'
  );
}

function sendSessionNotFound(res: ServerResponse): void {
  // 404 tells MCP clients to start a new session (Streamable HTTP spec).
  sendJson(res, 404, {
    jsonrpc: '2.0',
    error: { code: -32001, message: 'Session not found: initialize a new session' },
    id: null,
  });
}

/**
 * 429 for a key past its allowance of refused input, answered without parsing the body; a large
 * body is not read at all (the connection is closed).
 */
function sendHostileInputThrottled(req: IncomingMessage, res: ServerResponse, retryAfterMs: number): void {
  const retryAfterSeconds = Math.ceil(retryAfterMs / 1000);
  const close = !drainSmallBody(req);
  sendJson(
    res,
    429,
    {
      jsonrpc: '2.0',
      error: {
        code: -32029,
        message: `Too many refused requests from this key (oversized, too deeply nested or malformed bodies, or arguments over their limits): try again in ${retryAfterSeconds} s`,
        data: { code: 'HOSTILE_INPUT_THROTTLED', retryAfterSeconds },
      },
      id: null,
    },
    { 'Retry-After': String(retryAfterSeconds), ...(close ? { Connection: 'close' } : {}) },
    close ? () => req.socket.destroy() : undefined,
  );
}

// What is left of a body declared small is read and dropped, so the connection can serve the
// key's next request; a large or undeclared one is not read: its connection is closed instead.
const DRAINED_BODY_BYTES = 64 * 1024;

function drainSmallBody(req: IncomingMessage): boolean {
  const declared = Number(req.headers['content-length']);
  if (!(declared <= DRAINED_BODY_BYTES)) return false;
  req.resume();
  return true;
}
