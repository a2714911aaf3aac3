import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResult,
  ClientCapabilities,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { sha256Hex } from '@tollgate/kernel';
import { CircuitBreaker } from './circuit-breaker';
import { StreamableHttpToolCaller } from './streamable-http-tool-caller';
import {
  POOLED_CLIENT_CAPABILITIES,
  UpstreamCallRelay,
  currentCallRelay,
  undeclaredCapability,
  unrelayableRequest,
} from './upstream-call-relay';
import { StatelessUpstreamClient, parseResult } from './stateless-upstream-client';
import { isUpstreamAnswer, throughSdkClient } from './upstream-answer';
import { connectUpstreamOfEitherRevision } from './upstream-connector';
import type { UpstreamPropagation } from './upstream-propagation';
import { UpstreamSessionExpiredError } from './upstream-session-expired.error';
import { UpstreamException, UpstreamExceptionCode } from './upstream.exception';
import { UpstreamSpec } from './upstream-spec';

/** A pooled connection: the SDK client, and for Streamable HTTP the lean caller that makes its tool calls. */
interface PooledConnection {
  /** The SDK client of a session (2025-11-25 and earlier); absent for a 2026-07-28 upstream. */
  client?: Client;
  /** The client of an upstream that speaks only 2026-07-28: no session, one POST per request. */
  stateless?: StatelessUpstreamClient;
  toolCaller?: StreamableHttpToolCaller;
  /** The calls in progress on it, with the relay to each one's agent (if it has a stream). */
  calls: Set<{ relay?: UpstreamCallRelay }>;
  /** Replaced by a connection with new settings (a rotated secret): closed once its last call ends. */
  retired?: boolean;
}

interface PooledClient {
  version: string;
  connection: Promise<PooledConnection>;
  /** The connection once it is open. */
  open?: PooledConnection;
}

type ListChangedHandler = (spec: UpstreamSpec) => void;
type ResourceUpdatedHandler = (spec: UpstreamSpec, uri: string) => void;

/**
 * A per-user connection to an upstream (per-user OAuth): pooled apart from every other user's,
 * under `key`, with the user's own headers (their `Authorization`). New headers (a refreshed
 * token) replace the pooled client.
 */
export interface UpstreamSession {
  key: string;
  headers: Record<string, string>;
}

function poolKeyOf(spec: UpstreamSpec, session?: UpstreamSession): string {
  return session ? `${spec.id}|user:${session.key}` : spec.id;
}

/**
 * One long-lived MCP client per upstream per process (and per user, for per-user OAuth upstreams):
 * connected on first use, replaced when the upstream's settings change or its transport closes,
 * guarded by a circuit breaker so a dead upstream fails fast instead of tying up callers.
 */
@Injectable()
export class UpstreamClientPool implements OnModuleDestroy {
  private readonly logger = new Logger(UpstreamClientPool.name);
  private readonly clients = new Map<string, PooledClient>();
  private readonly breakers = new Map<string, CircuitBreaker>();
  // Upstream id -> namespace, for metrics that name upstreams as people know them.
  private readonly namespaces = new Map<string, string>();
  private readonly listChangedHandlers = new Set<ListChangedHandler>();
  private readonly resourceUpdatedHandlers = new Set<ResourceUpdatedHandler>();
  /** Per 2026-07-28 upstream, the resources whose updates its listen stream asks for. */
  private readonly watchedResources = new Map<string, Set<string>>();

  /** Told when an upstream announces that its tools, resources or prompts changed (a sync is due). */
  onToolListChanged(handler: ListChangedHandler): void {
    this.listChangedHandlers.add(handler);
  }

  /** Told when an upstream sends `notifications/resources/updated` for a subscribed URI. */
  onResourceUpdated(handler: ResourceUpdatedHandler): void {
    this.resourceUpdatedHandlers.add(handler);
  }

  private breaker(id: string): CircuitBreaker {
    let b = this.breakers.get(id);
    if (!b) {
      b = new CircuitBreaker();
      this.breakers.set(id, b);
    }
    return b;
  }

  /** The upstream's breaker, once it lets traffic through; while it is open, `CircuitOpen` with the time left. */
  /** Each upstream this process called, by namespace, and whether its breaker is open now. */
  breakerStates(now = Date.now()): { upstream: string; open: boolean }[] {
    return [...this.breakers].map(([id, b]) => ({ upstream: this.namespaces.get(id) ?? id, open: b.isOpen(now) }));
  }

  private closedBreaker(spec: UpstreamSpec, paused: 'calls' | 'requests'): CircuitBreaker {
    const breaker = this.breaker(spec.id);
    this.namespaces.set(spec.id, spec.namespace);
    const blocked = breaker.blockedForMs();
    if (blocked > 0) {
      throw new UpstreamException(
        UpstreamExceptionCode.CircuitOpen,
        `upstream ${spec.namespace} is failing; ${paused} are paused`,
        spec.id,
        blocked,
      );
    }
    return breaker;
  }

  private connectionFor(baseSpec: UpstreamSpec, session?: UpstreamSession): Promise<PooledConnection> {
    const key = poolKeyOf(baseSpec, session);
    const spec = session ? { ...baseSpec, headers: { ...baseSpec.headers, ...session.headers } } : baseSpec;
    // The version hashes the session's headers, so the header values never sit in the map in clear.
    const version = session ? `${spec.version}:${sha256Hex(JSON.stringify(session.headers))}` : spec.version;
    const pooled = this.clients.get(key);
    if (pooled && pooled.version === version) return pooled.connection;
    // New settings: new calls go to a new connection; the calls still running on the old one finish.
    if (pooled) void retireConnection(pooled);

    const announceListChanged = () => {
      for (const h of this.listChangedHandlers) h(spec);
    };
    const entry = { version } as PooledClient;
    entry.connection = connectUpstreamOfEitherRevision(spec, {
      onStderr: (line) => this.logger.debug(`[${spec.namespace}] ${line}`),
      capabilities: POOLED_CLIENT_CAPABILITIES,
    }).then((opened) => {
      // A stateless upstream has no connection to watch: what it asks comes back in its answers, and
      // its list changes on its subscriptions/listen stream (listened to once per upstream, not per user).
      if (opened.revision !== 'session') {
        // A stdio process that exited: the next call spawns a new one.
        opened.client.onclose = () => {
          if (this.clients.get(key) === entry) this.clients.delete(key);
        };
        if (!session)
          opened.client.listen({
            onListChanged: announceListChanged,
            onResourceUpdated: (uri) => {
              for (const h of this.resourceUpdatedHandlers) h(spec, uri);
            },
            resourceSubscriptions: () => [...(this.watchedResources.get(spec.id) ?? [])],
          });
        return (entry.open = { stateless: opened.client, calls: new Set() });
      }
      const client = opened.client;
      client.onclose = () => {
        if (this.clients.get(key) === entry) this.clients.delete(key);
      };
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => announceListChanged());
      client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => announceListChanged());
      client.setNotificationHandler(PromptListChangedNotificationSchema, async () => announceListChanged());
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
        for (const h of this.resourceUpdatedHandlers) h(spec, n.params.uri);
      });
      const toolCaller = spec.url
        ? StreamableHttpToolCaller.forClient(client, new URL(spec.url), spec.headers, announceListChanged)
        : undefined;
      const connection: PooledConnection = { client, toolCaller, calls: new Set() };
      relayToTheCallingAgent(connection);
      return (entry.open = connection);
    });
    this.clients.set(key, entry);
    entry.connection.catch(() => {
      if (this.clients.get(key) === entry) this.clients.delete(key);
    });
    return entry.connection;
  }

  /**
   * Asks a 2026-07-28 upstream for `notifications/resources/updated` of `uri` on the listen stream
   * this process keeps to it, or stops asking (the revision has no resources/subscribe). Updates
   * reach the `onResourceUpdated` handlers as a session upstream's do.
   */
  async watchResource(spec: UpstreamSpec, uri: string, watch: boolean): Promise<void> {
    const watched = this.watchedResources.get(spec.id) ?? new Set<string>();
    if (watch) watched.add(uri);
    else watched.delete(uri);
    if (watched.size > 0) this.watchedResources.set(spec.id, watched);
    else this.watchedResources.delete(spec.id);
    // A connection that cannot open now reads the set when one does.
    const opened = await this.connectionFor(spec).catch(() => undefined);
    await opened?.stateless?.reopenListens();
  }

  /**
   * Calls a tool on the upstream (as one user, with `session`). Transport and protocol failures
   * become `UpstreamException`.
   */
  async callTool(
    spec: UpstreamSpec,
    name: string,
    args: Record<string, unknown> | undefined,
    signal?: AbortSignal,
    session?: UpstreamSession,
    propagation?: UpstreamPropagation,
  ): Promise<CallToolResult> {
    const breaker = this.closedBreaker(spec, 'calls');
    try {
      const result = await this.callOnPooledConnection(spec, name, args, signal, session, propagation);
      breaker.recordSuccess();
      return result;
    } catch (err) {
      const outcome = breakerOutcomeOf(err, signal);
      if (outcome === 'not-the-upstream') {
        breaker.recordNeither();
        // Ours (a stack overflow, a serialization failure): no upstream error to report either.
        if (!signal?.aborted) throw err;
      } else if (outcome === 'answered') breaker.recordSuccess();
      else breaker.recordFailure();
      const failure = toUpstreamException(err, spec);
      // A refused credential says nothing about the upstream's health (one user's token expired).
      if (failure.code === UpstreamExceptionCode.Unauthorized && session) await this.evictSession(spec.id, session.key);
      throw failure;
    }
  }

  /**
   * Sends any other request (`resources/read`, `prompts/get`, `completion/complete`,
   * `resources/subscribe`...) on the pooled connection, guarded by the same circuit breaker. An
   * error the upstream answered (resource not found, invalid params) is rethrown as its `McpError`,
   * to be relayed to the agent as is; transport failures become `UpstreamException`.
   */
  async request<S extends AnySchema>(
    spec: UpstreamSpec,
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: S,
    signal?: AbortSignal,
    session?: UpstreamSession,
  ): Promise<SchemaOutput<S>> {
    const breaker = this.closedBreaker(spec, 'requests');
    try {
      let result: unknown;
      // What the upstream asks the client meanwhile (a prompt that needs input) goes to this request's agent.
      const call = { relay: currentCallRelay() };
      for (let attempt = 1; ; attempt++) {
        const pooled = await this.connectionFor(spec, session);
        pooled.calls.add(call);
        try {
          result = pooled.stateless
            ? await pooled.stateless.request(request, resultSchema, {
                timeout: spec.callTimeoutMs,
                signal,
                relay: call.relay,
                clientCapabilities: agentCapabilitiesOf(call.relay),
              })
            : pooled.toolCaller
              ? parseResult(
                  resultSchema,
                  await pooled.toolCaller.request(request.method, request.params, {
                    timeoutMs: spec.callTimeoutMs,
                    signal,
                    relay: call.relay,
                  }),
                )
              : await throughSdkClient(pooled.client!, spec.callTimeoutMs, () =>
                  pooled.client!.request(request as never, resultSchema, { timeout: spec.callTimeoutMs, signal }),
                );
          break;
        } catch (err) {
          // The upstream forgot our session (HTTP 404): set up a new one and ask again, once.
          const sessionLost =
            (err instanceof StreamableHTTPError && err.code === 404) || err instanceof UpstreamSessionExpiredError;
          if (!sessionLost || attempt === 2) throw err;
          this.forgetConnection(poolKeyOf(spec, session), pooled);
        } finally {
          leaveConnection(pooled, call);
        }
      }
      breaker.recordSuccess();
      return result as SchemaOutput<S>;
    } catch (err) {
      const outcome = breakerOutcomeOf(err, signal);
      if (outcome === 'answered') breaker.recordSuccess();
      else if (outcome === 'failure') breaker.recordFailure();
      else breaker.recordNeither();
      if (outcome === 'answered' && err instanceof McpError) throw err;
      if (outcome === 'not-the-upstream' && !signal?.aborted) throw err;
      const failure = toUpstreamException(err, spec);
      if (failure.code === UpstreamExceptionCode.Unauthorized && session) await this.evictSession(spec.id, session.key);
      throw failure;
    }
  }

  private async callOnPooledConnection(
    spec: UpstreamSpec,
    name: string,
    args: Record<string, unknown> | undefined,
    signal: AbortSignal | undefined,
    session: UpstreamSession | undefined,
    propagation: UpstreamPropagation | undefined,
  ): Promise<CallToolResult> {
    const relay = currentCallRelay();
    for (let attempt = 1; ; attempt++) {
      const pooled = await this.connectionFor(spec, session);
      const call = { relay };
      pooled.calls.add(call);
      try {
        if (pooled.stateless)
          return await pooled.stateless.callTool(name, args, {
            timeoutMs: spec.callTimeoutMs,
            signal,
            relay,
            clientCapabilities: agentCapabilitiesOf(relay),
            propagation,
          });
        if (!pooled.toolCaller) {
          const progress = relay?.progress ? { onprogress: relay.progress, resetTimeoutOnProgress: true } : {};
          // stdio and SSE have no request headers of their own: the trace context goes in params._meta
          // only (the SDK adds the progress token beside it).
          const meta = propagation?.meta;
          const params = {
            name,
            arguments: args,
            ...(meta && Object.keys(meta).length > 0 ? { _meta: meta } : {}),
            ...(relay?.task ? { task: relay.task } : {}),
          };
          return (await throughSdkClient(pooled.client!, spec.callTimeoutMs, () =>
            pooled.client!.callTool(params, undefined, {
              timeout: spec.callTimeoutMs,
              signal,
              ...progress,
            }),
          )) as CallToolResult;
        }
        return await pooled.toolCaller.callTool(name, args, {
          timeoutMs: spec.callTimeoutMs,
          signal,
          relay,
          propagation,
        });
      } catch (err) {
        if (!(err instanceof UpstreamSessionExpiredError)) throw err;
        // The upstream forgot our session (it restarted, or expired it) and ran nothing: set up a
        // new session and call again, once.
        this.forgetConnection(poolKeyOf(spec, session), pooled);
        if (attempt === 2) throw err;
      } finally {
        leaveConnection(pooled, call);
      }
    }
  }

  // Closes and forgets the pooled connection under `key`, unless another call already replaced it.
  private forgetConnection(key: string, connection: PooledConnection): void {
    const pooled = this.clients.get(key);
    if (pooled?.open !== connection) return;
    this.clients.delete(key);
    void closeConnection(pooled);
  }

  /** Closes and forgets one user's pooled client of an upstream (their connection was revoked or refused). */
  async evictSession(upstreamId: string, sessionKey: string): Promise<void> {
    const key = `${upstreamId}|user:${sessionKey}`;
    const pooled = this.clients.get(key);
    this.clients.delete(key);
    if (pooled) await closeConnection(pooled);
  }

  /** Closes and forgets the pooled clients of an upstream, every user's too (its settings changed or it was deleted). */
  async evict(upstreamId: string): Promise<void> {
    const keys = [...this.clients.keys()].filter((k) => k === upstreamId || k.startsWith(`${upstreamId}|`));
    const pooled = keys.map((k) => this.clients.get(k)!);
    for (const k of keys) this.clients.delete(k);
    this.breakers.delete(upstreamId);
    await Promise.allSettled(pooled.map(closeConnection));
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled(
      [...new Set([...this.clients.keys()].map((k) => k.split('|')[0]))].map((id) => this.evict(id)),
    );
  }
}

/**
 * What the upstream sends outside a call's own answer stream (all of stdio, SSE, and Streamable
 * HTTP's GET stream) carries no sign of the call it belongs to: it goes to the call in progress
 * when there is exactly one on the connection; a request that cannot be attributed is refused.
 */
function relayToTheCallingAgent(connection: PooledConnection): void {
  const soleRelay = (method: string): UpstreamCallRelay => {
    if (connection.calls.size !== 1) {
      throw unrelayableRequest(
        method,
        connection.calls.size === 0
          ? 'no tool call is in progress'
          : 'several tool calls are in progress on this connection',
      );
    }
    const [call] = connection.calls;
    // A call without a relay is one whose agent declared nothing it could be asked.
    if (!call.relay) throw undeclaredCapability(method);
    return call.relay;
  };
  for (const schema of [CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema]) {
    connection.client!.setRequestHandler(
      schema,
      async (request, extra) =>
        soleRelay(request.method).request(request.method, request.params, extra.signal) as never,
    );
  }
  connection.client!.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
    if (connection.calls.size !== 1) return;
    const [call] = connection.calls;
    call.relay?.log(n.params);
  });
}

/**
 * What a 2026-07-28 upstream is told the calling agent can be asked: what the agent declared. A
 * call without a relay has no stream to its agent, so nothing can be asked of it.
 */
function agentCapabilitiesOf(relay: UpstreamCallRelay | undefined): ClientCapabilities {
  return relay?.clientCapabilities ?? {};
}

/** Closes a pooled connection; one that never opened, or fails to close, needs nothing more. */
async function retireConnection(pooled: PooledClient): Promise<void> {
  const connection = await pooled.connection.catch(() => undefined);
  if (!connection) return;
  connection.retired = true;
  if (connection.calls.size === 0) await closeOpenConnection(connection);
}

async function closeConnection(pooled: PooledClient): Promise<void> {
  await pooled.connection.then(closeOpenConnection).catch(() => undefined);
}

async function closeOpenConnection(connection: PooledConnection): Promise<void> {
  await (connection.client ?? connection.stateless)?.close().catch(() => undefined);
}

/**
 * What a failed call says about the upstream's health, for its circuit breaker (which is shared by
 * every key of every organisation using the upstream, so no caller may open it for the others):
 * - `failure`: the upstream itself failed: no connection, reset, timeout, HTTP 5xx, a lost
 *   session, an answer that is not MCP (unparseable, malformed, missing);
 * - `answered`: a well-formed exchange whose answer is an error (a JSON-RPC error, HTTP 4xx, a
 *   refused credential): the upstream is up, whatever the caller sent it;
 * - `not-the-upstream`: the caller hung up, or the call failed here before or without the
 *   upstream (our stack or serialization: a `RangeError`, or a `TypeError` with no network cause).
 */
export function breakerOutcomeOf(err: unknown, signal?: AbortSignal): 'failure' | 'answered' | 'not-the-upstream' {
  if (signal?.aborted) return 'not-the-upstream';
  if (err instanceof RangeError || (err instanceof TypeError && err.cause === undefined)) return 'not-the-upstream';
  if (err instanceof UpstreamException) return err.code === UpstreamExceptionCode.Unauthorized ? 'answered' : 'failure';
  if (err instanceof StreamableHTTPError || err instanceof SseError) {
    const status = err.code ?? 0;
    return status >= 400 && status < 500 ? 'answered' : 'failure';
  }
  // A JSON-RPC error the upstream answered is the caller's result, whatever its code (-32000 and
  // -32001 included); only the timeouts and closed connections raised here are failures.
  if (err instanceof McpError) return isUpstreamAnswer(err) ? 'answered' : 'failure';
  return 'failure';
}

function toUpstreamException(err: unknown, spec: UpstreamSpec): UpstreamException {
  if (err instanceof UpstreamException) return err;
  if ((err instanceof StreamableHTTPError || err instanceof SseError) && err.code === 401) {
    return new UpstreamException(
      UpstreamExceptionCode.Unauthorized,
      `upstream ${spec.namespace} refused the credential (HTTP 401)`,
      spec.id,
    );
  }
  if (err instanceof StreamableHTTPError && err.code !== undefined && err.code > 0) {
    return new UpstreamException(
      UpstreamExceptionCode.Unavailable,
      `upstream ${spec.namespace} answered HTTP ${err.code}: ${err.message}`,
      spec.id,
    );
  }
  if (err instanceof UpstreamSessionExpiredError) {
    return new UpstreamException(
      UpstreamExceptionCode.Unavailable,
      `upstream ${spec.namespace} lost the MCP session twice in a row (HTTP 404)`,
      spec.id,
    );
  }
  if (err instanceof McpError) {
    if (isUpstreamAnswer(err)) {
      return new UpstreamException(
        UpstreamExceptionCode.ProtocolError,
        `upstream ${spec.namespace} answered with an error: ${err.message}`,
        spec.id,
      );
    }
    if (err.code === ErrorCode.RequestTimeout) {
      return new UpstreamException(
        UpstreamExceptionCode.Timeout,
        `upstream ${spec.namespace} did not answer within ${spec.callTimeoutMs} ms`,
        spec.id,
      );
    }
    if (err.code === ErrorCode.ConnectionClosed) {
      return new UpstreamException(
        UpstreamExceptionCode.Unavailable,
        `upstream ${spec.namespace} closed the connection`,
        spec.id,
      );
    }
  }
  const message = err instanceof Error ? err.message : String(err);
  return new UpstreamException(
    UpstreamExceptionCode.Unavailable,
    `upstream ${spec.namespace} is unreachable: ${message}`,
    spec.id,
  );
}

/** A call or request is done with `pooled`; a connection retired by new settings closes after its last one. */
function leaveConnection(pooled: PooledConnection, call: { relay?: UpstreamCallRelay }): void {
  pooled.calls.delete(call);
  if (pooled.retired && pooled.calls.size === 0) void closeOpenConnection(pooled);
}
