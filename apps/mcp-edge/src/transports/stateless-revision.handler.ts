import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, JSONRPCMessage, LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ToolCatalogService } from '@tollgate/upstream-registry';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Principal } from '@tollgate/identity';
import { TASKS_EXTENSION, TASKS_REQUIRED_CAPABILITIES, TASK_METHODS, declaresTasks } from '@tollgate/tasks';
import { UpstreamCallRelay, runWithCallRelay } from '@tollgate/mcp-client';
import { AgentCall, CallDispatcher } from '../dispatch/call-dispatcher.service';
import { CALL_META_KEY } from '../governed-call/call-meta';
import { SessionHub } from '../session/session-hub.service';
import { LIST_CHANGED_METHODS, ListKind } from '../session/list-changed';
import { VisibleListWatch } from '../session/visible-list-watch.service';
import { HeldCall, HeldCalls, inputResponsesOf } from './input-required-bridge';
import { sendJson } from '../endpoint/edge-auth';
import { EDGE_SERVER_INFO, McpServerFactory } from './mcp-server.factory';
import {
  META_PREFIX,
  OneRequestTransport,
  StatelessRequest,
  StatelessRevisionError,
  checkParamHeaders,
  checkStatelessEnvelope,
  completeResult,
  logWanted,
  requestIdOf,
  revisionError,
  supportedVersions,
  writeEvent,
} from './stateless-revision';

const KEEP_ALIVE_MS = 25_000;
/** 2026-07-28: the request needs a client capability that was not declared (with HTTP 400). */
const MISSING_CAPABILITY = -32021;
/** `subscriptions/listen` filters, and the list each one asks to hear of. */
const LIST_FILTERS: Record<ListKind, string> = {
  tools: 'toolsListChanged',
  prompts: 'promptsListChanged',
  resources: 'resourcesListChanged',
};

/** What a listen stream's acknowledgement says of its resource subscriptions: charged, and refused. */
const CALLS_META_KEY = 'tollgate/calls';
const REFUSED_META_KEY = 'tollgate/refused';
/** Each one is a governed subscription: a bound on what one request may ask for. */
const MAX_RESOURCE_SUBSCRIPTIONS = 100;

interface Listener {
  res: ServerResponse;
  subscriptionId: string;
  wants: Record<string, unknown>;
}

type JsonRpcError = { code: number; message: string; data?: unknown };
type JsonRpcAnswer =
  { id: string | number; result: Record<string, unknown> } | { id: string | number; error: JsonRpcError };

/**
 * MCP 2026-07-28 at /mcp, beside 2025-11-25: no session, each request carries its version and the
 * client's capabilities in `_meta`, routing headers checked against the body, lists with caching
 * hints, `server/discover` and `subscriptions/listen`. Every other method runs the edge's own
 * 2025-11-25 handlers (the same governed pipeline for `tools/call`) through an in-process
 * transport; progress and log messages of a call ride its answer stream.
 */
@Injectable()
export class StatelessRevisionHandler implements OnApplicationShutdown {
  private readonly logger = new Logger(StatelessRevisionHandler.name);
  private readonly listeners = new Set<Listener>();
  private readonly held: HeldCalls;

  constructor(
    private readonly servers: McpServerFactory,
    private readonly dispatcher: CallDispatcher,
    private readonly catalog: ToolCatalogService,
    private readonly listWatch: VisibleListWatch,
    private readonly hub: SessionHub,
    @Inject(TOLLGATE_CONFIG) config: EdgeConfig,
  ) {
    // Signed with the deployment's key, so another edge can check a retry's requestState.
    this.held = new HeldCalls(config.edge.requestStateKey);
  }

  /** Answers one POST of this revision; never rejects. */
  async answer(req: IncomingMessage, res: ServerResponse, principal: Principal, body: unknown): Promise<void> {
    let request: StatelessRequest | null = null;
    try {
      request = checkStatelessEnvelope(req, body);
      if (!request) return await this.takeNotification(res, principal, body);
      switch (request.method) {
        case 'server/discover':
          return sendAnswer(
            res,
            { id: request.id, result: completeResult(request.method, await this.discover(principal, req)) },
            false,
          );
        case 'subscriptions/listen':
          return await this.listen(res, principal, request);
        case 'tools/call':
          await this.checkToolHeaders(req, principal, request);
          return await this.answerInRounds(req, res, principal, request);
        case 'prompts/get':
          return await this.answerInRounds(req, res, principal, request);
      }
      if (TASK_METHODS.has(request.method)) return await this.answerTask(res, principal, request);
      // The 2025-11-25 tasks' own methods (the SDK server answers them for that revision) are removed in this one.
      if (request.method === 'tasks/result' || request.method === 'tasks/list')
        throw new StatelessRevisionError(404, ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
      await this.answerOnServer(req, res, principal, request);
    } catch (err) {
      const e =
        err instanceof StatelessRevisionError
          ? err
          : new StatelessRevisionError(500, ErrorCode.InternalError, 'Internal error');
      if (!(err instanceof StatelessRevisionError))
        this.logger.error(`${request?.method ?? 'request'} failed: ${(err as Error).message}`);
      const error =
        e.data === undefined
          ? { code: e.code, message: e.message }
          : { code: e.code, message: e.message, data: e.data };
      const id = request?.id ?? requestIdOf(body);
      if (res.headersSent) {
        writeEvent(res, { jsonrpc: '2.0', id, error });
        res.end();
      } else sendJson(res, e.status, { jsonrpc: '2.0', id, error });
    }
  }

  // A notification needs no answer; a cancellation aborts the call it names, on any edge.
  private async takeNotification(res: ServerResponse, principal: Principal, body: unknown): Promise<void> {
    const n = body as { method: string; params?: { requestId?: string | number; reason?: string } };
    if (n.method === 'notifications/cancelled' && n.params?.requestId !== undefined)
      await this.dispatcher.cancel(principal, undefined, n.params.requestId, n.params.reason);
    res.writeHead(202).end();
  }

  /** Runs the request on the edge's SDK server in this process; its notifications stream, its answer ends the POST. */
  private async answerOnServer(
    req: IncomingMessage,
    res: ServerResponse,
    principal: Principal,
    request: StatelessRequest,
  ): Promise<void> {
    let streamed = false;
    const answer = await this.runOnServer(req, principal, request, (m) => {
      if (res.writableEnded) return;
      streamed = true;
      writeEvent(res, m);
    });
    this.sendFinal(res, request, answer, streamed);
  }

  /** The edge's 2025-11-25 handler for `request`, run in this process; `notify` gets its notifications. */
  private async runOnServer(
    req: IncomingMessage,
    principal: Principal,
    request: StatelessRequest,
    notify: (message: object) => void,
  ): Promise<JsonRpcAnswer> {
    const server = this.servers.createServer(principal, null);
    let settle!: (answer: JsonRpcAnswer) => void;
    const answered = new Promise<JsonRpcAnswer>((resolve) => (settle = resolve));
    const transport = new OneRequestTransport((message) => {
      const m = message as Record<string, unknown>;
      if (m.id === request.id && ('result' in m || 'error' in m)) return settle(m as JsonRpcAnswer);
      // Requests to the client are input-required results in this revision, never sent mid-call.
      if (m.id !== undefined || typeof m.method !== 'string') return;
      if (
        m.method === 'notifications/message' &&
        !logWanted((m.params as { level?: unknown } | undefined)?.level, request.logLevel)
      )
        return;
      notify(m);
    });
    await server.connect(transport);
    try {
      const message = {
        jsonrpc: '2.0',
        id: request.id,
        method: request.method,
        params: request.params,
      } as JSONRPCMessage;
      transport.onmessage?.(message, { requestInfo: { headers: req.headers } });
      return await answered;
    } finally {
      void server.close();
    }
  }

  private sendFinal(res: ServerResponse, request: StatelessRequest, answer: JsonRpcAnswer, streamed: boolean): void {
    if ('error' in answer) {
      const error = revisionError(request.method, answer.error);
      // A method the edge does not serve is 404 in this revision; other errors are JSON-RPC answers.
      const status = error.code === ErrorCode.MethodNotFound ? 404 : 200;
      if (streamed) return sendAnswer(res, { id: request.id, error }, true);
      return sendJson(res, status, { jsonrpc: '2.0', id: request.id, error });
    }
    sendAnswer(res, { id: request.id, result: completeResult(request.method, answer.result) }, streamed);
  }

  /**
   * tools/call and prompts/get, governed as on every path. What the upstream asks the client
   * mid-call becomes an input-required result, and the agent's retry (inputResponses,
   * requestState) answers it; the call runs on until it answers.
   */
  private async answerInRounds(
    req: IncomingMessage,
    res: ServerResponse,
    principal: Principal,
    request: StatelessRequest,
  ): Promise<void> {
    const { name, arguments: args } = request.params as { name?: unknown; arguments?: unknown };
    if (typeof name !== 'string')
      throw new StatelessRevisionError(200, ErrorCode.InvalidParams, 'params.name must be a string');
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args)))
      throw new StatelessRevisionError(200, ErrorCode.InvalidParams, 'params.arguments must be an object');
    const responses = inputResponsesOf(request.params);
    const resumed = request.params.requestState !== undefined;
    const call = resumed
      ? this.held.resume(principal.keyId, request.params.requestState)
      : this.startCall(req, principal, request, responses);
    let streamed = false;
    let answered = false;
    call.notify = (message) => {
      if (answered || res.writableEnded) return;
      streamed = true;
      writeEvent(res, message);
    };
    // The agent hanging up on a round that has not answered yet ends the call.
    res.on('close', () => {
      if (!answered) call.expire();
    });
    if (resumed) call.takeResponses(responses ?? {});
    const round = await call.nextRound((c) => this.held.sign(c));
    answered = true;
    if (round.kind === 'input_required') {
      return sendAnswer(
        res,
        {
          id: request.id,
          result: {
            resultType: 'input_required',
            inputRequests: round.inputRequests,
            requestState: round.requestState,
          },
        },
        streamed,
      );
    }
    const answer = { id: request.id, ...round.answer };
    // A call that failed after the upstream was refused a capability this client lacks: say which.
    if ('result' in answer && answer.result.isError === true && Object.keys(call.refused).length > 0) {
      const error = {
        code: MISSING_CAPABILITY,
        message: 'This call needs a capability the client did not declare',
        data: { requiredCapabilities: call.refused },
      };
      if (streamed) return sendAnswer(res, { id: request.id, error }, true);
      return sendJson(res, 400, { jsonrpc: '2.0', id: request.id, error });
    }
    this.sendFinal(res, request, answer, streamed);
  }

  private startCall(
    req: IncomingMessage,
    principal: Principal,
    request: StatelessRequest,
    given: Record<string, Record<string, unknown>> | undefined,
  ): HeldCall {
    // Ended when the agent does not come back for a round in time (HeldCall.expire).
    const ended = new AbortController();
    const call = new HeldCall(principal.keyId, request.clientCapabilities, ended, { ...given });
    const release = this.held.hold(call);
    const token = (request.params._meta as { progressToken?: string | number } | undefined)?.progressToken;
    const relay: UpstreamCallRelay = {
      // A 2026-07-28 upstream is told what this request declared, nothing more.
      clientCapabilities: request.clientCapabilities,
      progress:
        token === undefined
          ? undefined
          : (p) =>
              call.notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { ...p, progressToken: token } }),
      log: (params) => {
        if (logWanted(params.level, request.logLevel))
          call.notify({ jsonrpc: '2.0', method: 'notifications/message', params });
      },
      request: (method, params, signal, inputKey) => call.ask(method, params, signal, inputKey),
      refused: (required) => call.refuse(required),
    };
    // tools/call goes to the dispatcher; prompts/get runs the edge's SDK handler in this process,
    // which dispatches it in turn (under this relay, which a sessionless handler keeps).
    const run: () => Promise<{ result: Record<string, unknown> } | { error: JsonRpcError }> =
      request.method === 'tools/call'
        ? async () => ({
            result: (await this.dispatcher.callTool(
              { principal, session: null, requestId: request.id, ended: ended.signal, relay: () => relay },
              request.params.name as string,
              request.params.arguments as Record<string, unknown> | undefined,
            )) as Record<string, unknown>,
          })
        : () => runWithCallRelay(relay, () => this.runOnServer(req, principal, request, (m) => call.notify(m)));
    run()
      .then(
        (answer) => call.finish(answer),
        (err: Error) => {
          this.logger.error(`${request.method} failed: ${err.message}`);
          call.finish({ error: { code: ErrorCode.InternalError, message: 'Internal error' } });
        },
      )
      .finally(release);
    return call;
  }

  /** tasks/get, tasks/update, tasks/cancel: only for a request that declares the tasks extension. */
  private async answerTask(res: ServerResponse, principal: Principal, request: StatelessRequest): Promise<void> {
    if (!declaresTasks(request.clientCapabilities))
      throw new StatelessRevisionError(
        400,
        MISSING_CAPABILITY,
        `${request.method} needs the ${TASKS_EXTENSION} extension in the client's capabilities`,
        TASKS_REQUIRED_CAPABILITIES,
      );
    const answer = await this.dispatcher.answerTask(
      { principal, session: null, requestId: request.id },
      request.method,
      request.params,
      request.clientCapabilities,
    );
    if ('error' in answer) return sendJson(res, 200, { jsonrpc: '2.0', id: request.id, error: answer.error });
    sendAnswer(res, { id: request.id, result: completeResult(request.method, answer.result) }, false);
  }

  // server/discover: what initialize told a 2025-11-25 client, for this key, without a session.
  private async discover(principal: Principal, req: IncomingMessage): Promise<Record<string, unknown>> {
    const server = this.servers.createServer(principal, null);
    let settle!: (result: Record<string, unknown>) => void;
    const initialized = new Promise<Record<string, unknown>>((resolve) => (settle = resolve));
    const transport = new OneRequestTransport((m) =>
      settle('result' in m ? (m.result as Record<string, unknown>) : {}),
    );
    await server.connect(transport);
    const initialize = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'discover', version: '0' },
      },
    };
    transport.onmessage?.(initialize as JSONRPCMessage, { requestInfo: { headers: req.headers } });
    const init = await initialized;
    await server.close();
    const capabilities = { ...((init.capabilities as Record<string, Record<string, unknown>> | undefined) ?? {}) };
    // Changes reach a client through subscriptions/listen; resource subscriptions are its filters now.
    for (const list of ['tools', 'prompts', 'resources'])
      if (capabilities[list]) capabilities[list] = { ...capabilities[list], listChanged: true };
    if (capabilities.resources) delete capabilities.resources.subscribe;
    // The 2025-11-25 tasks slot: in this revision tasks are the extension below.
    delete capabilities.tasks;
    // Tasks of upstreams that run calls as tasks are relayed (and governed) by the edge.
    capabilities.extensions = { ...capabilities.extensions, [TASKS_EXTENSION]: {} };
    return {
      supportedVersions: supportedVersions(),
      capabilities,
      ...(init.instructions ? { instructions: init.instructions } : {}),
      _meta: { [`${META_PREFIX}serverInfo`]: EDGE_SERVER_INFO },
    };
  }

  private async checkToolHeaders(req: IncomingMessage, principal: Principal, request: StatelessRequest): Promise<void> {
    const name = request.params.name;
    if (typeof name !== 'string') return;
    const tool = (await this.catalog.catalogFor(principal.orgId)).byExposedName.get(name);
    checkParamHeaders(req, tool?.definition.inputSchema, (request.params.arguments ?? {}) as Record<string, unknown>);
  }

  /**
   * subscriptions/listen: an event stream that hears of list changes, and of updates to the
   * resources it names, until the client closes it. Each resource subscription is governed like a
   * 2025-11-25 `resources/subscribe` (resource policy, `subscription:<uri>` prices, budgets, one
   * ledger row) and released when the stream closes; the acknowledgement names what is honored, and
   * says why any resource is not.
   */
  private async listen(res: ServerResponse, principal: Principal, request: StatelessRequest): Promise<void> {
    const wants = (request.params.notifications ?? {}) as Record<string, unknown>;
    const uris = resourceSubscriptionsOf(wants);
    const listener: Listener = { res, subscriptionId: String(request.id), wants };
    const call: AgentCall = { principal, session: null, requestId: request.id };
    const subscriber = `listen:${randomUUID()}`;
    // The acknowledgement is the stream's first message: an update heard before it waits for it.
    const early: Record<string, unknown>[] = [];
    let acknowledged = false;
    const detach = this.hub.attachListener(subscriber, (message) =>
      acknowledged ? this.relayToListener(listener, message) : early.push(message),
    );
    const { honored, charged, refused } = await this.subscribeResources(call, subscriber, uris);
    const release = () => {
      detach();
      for (const uri of honored)
        this.dispatcher
          .unsubscribe(call, { uri }, subscriber)
          .catch((err: Error) => this.logger.warn(`could not release a listen stream's subscription: ${err.message}`));
    };
    if (res.destroyed) return release(); // the client left while its subscriptions were made

    this.listeners.add(listener);
    // Catalog and policy changes (an upstream's own announcement included, through the sync it
    // queues) reach this stream when they change what its key sees.
    const unwatch = this.listWatch.watch(principal, null, (kinds) => this.announceListChanges(listener, kinds));
    writeEvent(res, {
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        notifications: {
          ...Object.fromEntries(
            Object.values(LIST_FILTERS)
              .map((f) => [f, wants[f] === true])
              .filter(([, on]) => on),
          ),
          ...(uris.length > 0 ? { resourceSubscriptions: honored } : {}),
        },
        _meta: {
          [`${META_PREFIX}subscriptionId`]: listener.subscriptionId,
          ...(charged.length > 0 ? { [CALLS_META_KEY]: charged } : {}),
          ...(refused.length > 0 ? { [REFUSED_META_KEY]: refused } : {}),
        },
      },
    });
    acknowledged = true;
    for (const message of early.splice(0)) this.relayToListener(listener, message);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    res.on('close', () => {
      clearInterval(keepAlive);
      unwatch();
      release();
      this.listeners.delete(listener);
    });
  }

  /** Subscribes the listen stream to each resource it names, one governed subscription each. */
  private async subscribeResources(
    call: AgentCall,
    subscriber: string,
    uris: string[],
  ): Promise<{ honored: string[]; charged: Record<string, unknown>[]; refused: Record<string, unknown>[] }> {
    const honored: string[] = [];
    const charged: Record<string, unknown>[] = [];
    const refused: Record<string, unknown>[] = [];
    for (const uri of uris) {
      try {
        const answer = (await this.dispatcher.subscribe(call, { uri }, subscriber)) as {
          _meta?: Record<string, unknown>;
        };
        honored.push(uri);
        const meta = answer._meta?.[CALL_META_KEY];
        if (meta) charged.push({ uri, ...(meta as object) });
      } catch (err) {
        // A refusal carries the governed body (code, message, hint...); anything else its JSON-RPC error.
        const data = err instanceof McpError ? (err.data as Record<string, unknown> | undefined) : undefined;
        refused.push({
          uri,
          ...(data && typeof data.code === 'string'
            ? data
            : { code: err instanceof McpError ? err.code : ErrorCode.InternalError, message: (err as Error).message }),
        });
      }
    }
    return { honored, charged, refused };
  }

  /** A notification for the stream's subscriber, under the stream's subscription id. */
  private relayToListener(l: Listener, message: Record<string, unknown>): void {
    const params = (message.params ?? {}) as Record<string, unknown>;
    const meta = { ...(params._meta as object), [`${META_PREFIX}subscriptionId`]: l.subscriptionId };
    try {
      writeEvent(l.res, { ...message, params: { ...params, _meta: meta } });
    } catch (err) {
      this.logger.warn(`could not notify a listen stream: ${(err as Error).message}`);
    }
  }

  private announceListChanges(l: Listener, kinds: ListKind[]): void {
    for (const kind of kinds) {
      if (l.wants[LIST_FILTERS[kind]] !== true) continue;
      try {
        writeEvent(l.res, {
          jsonrpc: '2.0',
          method: LIST_CHANGED_METHODS[kind],
          params: { _meta: { [`${META_PREFIX}subscriptionId`]: l.subscriptionId } },
        });
      } catch (err) {
        this.logger.warn(`could not notify a listen stream: ${(err as Error).message}`);
      }
    }
  }

  onApplicationShutdown(): void {
    for (const l of this.listeners) l.res.end();
    this.listeners.clear();
  }
}

function sendAnswer(res: ServerResponse, answer: JsonRpcAnswer, streamed: boolean): void {
  if (!streamed) return sendJson(res, 200, { jsonrpc: '2.0', ...answer });
  writeEvent(res, { jsonrpc: '2.0', ...answer });
  res.end();
}

/** The listen filter's `resourceSubscriptions`: URIs, each once (-32602 for anything else). */
function resourceSubscriptionsOf(wants: Record<string, unknown>): string[] {
  const uris = wants.resourceSubscriptions;
  if (uris === undefined) return [];
  if (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string' && u.length > 0))
    throw new StatelessRevisionError(
      400,
      ErrorCode.InvalidParams,
      'notifications.resourceSubscriptions must be an array of resource URIs',
    );
  if (uris.length > MAX_RESOURCE_SUBSCRIPTIONS)
    throw new StatelessRevisionError(
      400,
      ErrorCode.InvalidParams,
      `notifications.resourceSubscriptions names ${uris.length} resources; at most ${MAX_RESOURCE_SUBSCRIPTIONS} per stream`,
    );
  return [...new Set(uris as string[])];
}
