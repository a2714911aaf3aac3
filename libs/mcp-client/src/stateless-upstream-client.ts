import {
  CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  McpError,
  ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { AnySchema, SchemaOutput, safeParse } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { JsonRpcAnswer, StatelessWire, StatelessWireRequest } from './stateless-wire';
import { CONNECTION_HEADERS } from './streamable-http-tool-caller';
import { upstreamAnswerError } from './upstream-answer';
import { UpstreamCallRelay, undeclaredCapability } from './upstream-call-relay';
import { TOLLGATE_CLIENT_INFO } from './upstream-client-capabilities';
import type { UpstreamPropagation } from './upstream-propagation';
import { UpstreamSpec } from './upstream-spec';

/** The stateless revision (SEP-2575): no session, each request carries its `_meta` and routing headers. */
export const STATELESS_REVISION = '2026-07-28';
/** 2026-07-28: the request needs a client capability the client did not declare. */
export const MISSING_CAPABILITY_CODE = -32021;
const META = 'io.modelcontextprotocol/';
/** An upstream that keeps asking for input past this many rounds is cut off (a loop, not a dialogue). */
const MAX_INPUT_ROUNDS = 16;
/** The edge asks for every log message; the agent's relay filters at the agent's own level. */
const RELAYED_LOG_LEVEL = 'debug';
/** How often an unknown tool name may trigger a new read of the tool list (for its parameter headers). */
const PARAM_HEADERS_TTL_MS = 10_000;

/** `subscriptions/listen` filters per list capability, and the notifications they bring. */
const LIST_CHANGED_FILTERS: Record<string, string> = {
  tools: 'toolsListChanged',
  prompts: 'promptsListChanged',
  resources: 'resourcesListChanged',
};
const LIST_CHANGED_METHODS = new Set([
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
]);
/** Pauses before a listen stream is opened again: from one second, doubling, up to half a minute. */
const LISTEN_RETRY_MIN_MS = 1_000;
const LISTEN_RETRY_MAX_MS = 30_000;
/** How long a new resource subscription waits for the listen stream to be open again with it. */
const LISTEN_REOPEN_WAIT_MS = 5_000;

export interface StatelessRequestOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  relay?: UpstreamCallRelay;
  /** What the upstream is told the client can be asked; the client's own (the sync's) when absent. */
  clientCapabilities?: ClientCapabilities;
  /** The call's trace context and request id, in the headers and `_meta` (a governed `tools/call`'s). */
  propagation?: UpstreamPropagation;
}

/** One listen loop: `stop` ends it, aborting `stream` reopens it; `opened` wait for its next answer. */
interface ListenStream {
  stop: AbortController;
  stream?: AbortController;
  opened: (() => void)[];
}

/** What an upstream's `subscriptions/listen` stream is asked for, and who hears what it sends. */
export interface UpstreamListenEvents {
  onListChanged(): void;
  onResourceUpdated(uri: string): void;
  /** The resources whose updates to ask for. */
  resourceSubscriptions(): string[];
}

/** Thrown when the upstream does not speak 2026-07-28 (its `server/discover` failed or does not list it). */
export class NotStatelessUpstreamError extends Error {}

let lastRequestId = 0;

/**
 * A client of an upstream that speaks MCP 2026-07-28, over Streamable HTTP or stdio (its `wire`).
 * SDK 1.32 has no client for that revision, so this is the edge's own: no session, each request
 * with `_meta` giving the version and our capabilities (and on HTTP, one POST with the
 * `Mcp-Method`/`Mcp-Name` routing headers); progress and log messages are relayed while it runs;
 * an `input_required` result is answered through the call's relay (the agent's client) and the
 * request retried with `inputResponses` and the upstream's `requestState`, so to the caller it is
 * one request with one result.
 */
export class StatelessUpstreamClient {
  /** Told once when the upstream can no longer be reached on this client (its stdio process exited). */
  onclose?: () => void;
  /** Per tool, the arguments its schema mirrors in `Mcp-Param-<Name>` headers (read from tools/list). */
  private paramHeaders?: Map<string, [argument: string, header: string][]>;
  private paramHeadersReadAt = 0;
  /** The `subscriptions/listen` streams it keeps open. */
  private readonly listens = new Set<ListenStream>();

  private constructor(
    private readonly spec: UpstreamSpec,
    private readonly capabilities: ClientCapabilities,
    private serverCapabilities: ServerCapabilities,
    private readonly wire: StatelessWire,
  ) {
    wire.onclose = () => {
      this.stopListens();
      this.onclose?.();
    };
  }

  /**
   * Asks the upstream's `server/discover` (on `wire`; by default a POST to the spec's URL);
   * rejects with `NotStatelessUpstreamError` if 2026-07-28 is not among its versions.
   */
  static async discover(
    spec: UpstreamSpec,
    capabilities: ClientCapabilities,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    wire: StatelessWire,
  ): Promise<StatelessUpstreamClient> {
    const client = new StatelessUpstreamClient(spec, capabilities, {}, wire);
    let result: Record<string, unknown>;
    try {
      result = await client.send('server/discover', undefined, { timeoutMs, signal });
    } catch (err) {
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) throw err;
      throw new NotStatelessUpstreamError(err instanceof Error ? err.message : String(err));
    }
    const versions = Array.isArray(result.supportedVersions) ? result.supportedVersions : [];
    if (!versions.includes(STATELESS_REVISION))
      throw new NotStatelessUpstreamError(`upstream ${spec.namespace} does not support ${STATELESS_REVISION}`);
    client.serverCapabilities = (result.capabilities ?? {}) as ServerCapabilities;
    return client;
  }

  getServerCapabilities(): ServerCapabilities {
    return this.serverCapabilities;
  }

  /** The SDK client's `request` shape, for code that lists with either client (the catalog sync). */
  async request<S extends AnySchema>(
    request: { method: string; params?: Record<string, unknown> },
    schema: S,
    options: {
      timeout?: number;
      signal?: AbortSignal;
      relay?: UpstreamCallRelay;
      clientCapabilities?: ClientCapabilities;
    } = {},
  ): Promise<SchemaOutput<S>> {
    const raw = await this.send(request.method, request.params, {
      timeoutMs: options.timeout ?? this.spec.callTimeoutMs,
      signal: options.signal,
      relay: options.relay,
      clientCapabilities: options.clientCapabilities,
    });
    return parseResult(schema, raw);
  }

  async callTool(
    name: string,
    args: Record<string, unknown> | undefined,
    options: StatelessRequestOptions,
  ): Promise<CallToolResult> {
    // stdio has no headers: the tool list need not be read for them.
    const headers = this.wire.routingHeaders ? await this.paramHeadersOf(name, args, options) : {};
    const raw = await this.send('tools/call', { name, arguments: args }, options, headers);
    const parsed = CallToolResultSchema.safeParse(raw);
    if (!parsed.success) throw parsed.error;
    return parsed.data;
  }

  // The routing headers a tool's arguments need. The tool list is read on the first call and again
  // (at most every ttl) when a tool is not in it.
  private async paramHeadersOf(
    name: string,
    args: Record<string, unknown> | undefined,
    { timeoutMs, propagation }: StatelessRequestOptions,
  ): Promise<Record<string, string>> {
    if (
      !this.paramHeaders ||
      (!this.paramHeaders.has(name) && Date.now() - this.paramHeadersReadAt > PARAM_HEADERS_TTL_MS)
    ) {
      this.paramHeadersReadAt = Date.now();
      this.paramHeaders = await this.readParamHeaders(timeoutMs, propagation).catch(
        () => this.paramHeaders ?? new Map(),
      );
    }
    const headers: Record<string, string> = {};
    for (const [argument, header] of this.paramHeaders.get(name) ?? []) {
      const value = args?.[argument];
      if (value === undefined || value === null) continue;
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      // Plain when it is safe in a header, else Base64-wrapped as the revision allows.
      headers[`mcp-param-${header.toLowerCase()}`] =
        /^[\x20-\x7e]*$/.test(text) && text.trim() === text
          ? text
          : `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
    }
    return headers;
  }

  private async readParamHeaders(
    timeoutMs: number,
    propagation: UpstreamPropagation | undefined,
  ): Promise<Map<string, [string, string][]>> {
    const out = new Map<string, [string, string][]>();
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = await this.send('tools/list', cursor ? { cursor } : undefined, { timeoutMs, propagation });
      for (const tool of Array.isArray(res.tools)
        ? (res.tools as { name?: unknown; inputSchema?: { properties?: Record<string, Record<string, unknown>> } }[])
        : []) {
        const pairs = Object.entries(tool.inputSchema?.properties ?? {}).flatMap(([arg, schema]) =>
          typeof schema?.['x-mcp-header'] === 'string' ? [[arg, schema['x-mcp-header']] as [string, string]] : [],
        );
        out.set(String(tool.name), pairs);
      }
      cursor = typeof res.nextCursor === 'string' && res.nextCursor !== '' ? res.nextCursor : undefined;
      if (!cursor) break;
    }
    return out;
  }

  /** Stops its listen streams and closes its wire (ends a stdio process; no session to end). */
  async close(): Promise<void> {
    this.stopListens();
    await this.wire.close();
  }

  private stopListens(): void {
    for (const listen of this.listens) listen.stop.abort();
    this.listens.clear();
  }

  /**
   * One request to its final result: each `input_required` round's requests go to the agent's
   * client through the relay, and the request is sent again with their answers. Resolves with the
   * result less `resultType`; an error answer throws its `McpError`.
   */
  async send(
    method: string,
    params: Record<string, unknown> | undefined,
    options: StatelessRequestOptions,
    extraHeaders: Record<string, string> = {},
  ): Promise<Record<string, unknown>> {
    options.signal?.throwIfAborted();
    const call = new AbortController();
    const timer = setTimeout(
      () => call.abort(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: options.timeoutMs })),
      options.timeoutMs,
    );
    const onCallerAbort = () => call.abort(new McpError(ErrorCode.RequestTimeout, String(options.signal?.reason)));
    options.signal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      let round: Record<string, unknown> = { ...params };
      for (let i = 0; i <= MAX_INPUT_ROUNDS; i++) {
        const answer = await this.exchange(
          method,
          round,
          options.relay,
          options.clientCapabilities ?? this.capabilities,
          call.signal,
          extraHeaders,
          options.propagation,
        ).catch((err: unknown) => {
          throw call.signal.aborted ? call.signal.reason : err;
        });
        if ('error' in answer) {
          const { code, message, data } = answer.error;
          // The agent's own client is told which capabilities it lacks (a 2026-07-28 agent gets -32021).
          const required = (data as { requiredCapabilities?: unknown } | undefined)?.requiredCapabilities;
          if (code === MISSING_CAPABILITY_CODE && typeof required === 'object' && required !== null)
            options.relay?.refused?.(required as Record<string, Record<string, unknown>>);
          throw upstreamAnswerError(code, message, data);
        }
        // The caching hints are the upstream's to us; the edge gives its agents its own.
        // A call the upstream runs as a task (tasks extension) answers a CreateTaskResult: it says
        // so, and its ttlMs is the task's, not a caching hint.
        if (answer.result.resultType === 'task') return answer.result;
        const { resultType, ttlMs: _ttl, cacheScope: _scope, ...result } = answer.result;
        if (resultType !== 'input_required') return result;
        const inputResponses = await this.askTheAgent(result.inputRequests, options.relay, call.signal);
        round = {
          ...params,
          inputResponses,
          ...(result.requestState !== undefined ? { requestState: result.requestState } : {}),
        };
      }
      throw new McpError(
        ErrorCode.InternalError,
        `upstream ${this.spec.namespace} asked for input more than ${MAX_INPUT_ROUNDS} times`,
      );
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  // The agent's client answers each input request of a round (together, as the upstream asked them).
  private async askTheAgent(
    inputRequests: unknown,
    relay: UpstreamCallRelay | undefined,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    if (typeof inputRequests !== 'object' || inputRequests === null)
      throw new McpError(
        ErrorCode.InvalidParams,
        `upstream ${this.spec.namespace} sent input_required without inputRequests`,
      );
    const entries = Object.entries(
      inputRequests as Record<string, { method?: unknown; params?: Record<string, unknown> }>,
    );
    const answers = await Promise.all(
      entries.map(async ([key, req]) => {
        const method = String(req?.method);
        try {
          if (!relay) throw undeclaredCapability(method);
          // The upstream's key goes with the request, so an agent of this revision sees the same name.
          return [key, await relay.request(method, req?.params, signal, key)] as const;
        } catch (err) {
          const e = err as { code?: unknown; message?: unknown; data?: unknown };
          // The agent's answer, whatever its code: nothing the upstream's breaker should count.
          throw upstreamAnswerError(
            typeof e.code === 'number' ? e.code : ErrorCode.InternalError,
            String(e.message ?? err),
            e.data,
          );
        }
      }),
    );
    return Object.fromEntries(answers);
  }

  /** One request of this revision: its id, message with the request's `_meta`, and routing headers. */
  private requestOf(
    method: string,
    params: Record<string, unknown>,
    clientCapabilities: ClientCapabilities,
    extraHeaders: Record<string, string>,
    relay?: UpstreamCallRelay,
    propagated?: UpstreamPropagation,
  ): StatelessWireRequest {
    const id = `tollgate-s${++lastRequestId}`;
    // The call's trace context and request id (made by the edge for a governed call).
    const meta: Record<string, unknown> = {
      ...(params._meta as Record<string, unknown> | undefined),
      ...propagated?.meta,
      [`${META}protocolVersion`]: STATELESS_REVISION,
      [`${META}clientCapabilities`]: clientCapabilities,
      [`${META}clientInfo`]: TOLLGATE_CLIENT_INFO,
    };
    if (relay?.progress) meta.progressToken = id;
    if (relay) meta[`${META}logLevel`] = RELAYED_LOG_LEVEL;
    const headers: Record<string, string> = {};
    // undici manages connection-level headers itself and refuses them from callers.
    for (const [name, value] of Object.entries(this.spec.headers))
      if (!CONNECTION_HEADERS.has(name.toLowerCase())) headers[name] = value;
    Object.assign(headers, {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': STATELESS_REVISION,
      'mcp-method': method,
      ...propagated?.headers,
      ...extraHeaders,
    });
    const named =
      method === 'tools/call' || method === 'prompts/get'
        ? params.name
        : method === 'resources/read'
          ? params.uri
          : undefined;
    if (typeof named === 'string') headers['mcp-name'] = named;
    return { id, headers, message: { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } } };
  }

  /**
   * Listens to the upstream's `subscriptions/listen` stream: changes of the lists it declares
   * `listChanged` for, and updates of the resources `events.resourceSubscriptions()` names (read at
   * each opening). The stream is opened again when it ends (after a pause that grows while it keeps
   * failing), or at once after `reopenListens`, until the returned function, or `close`, stops it.
   */
  listen(events: UpstreamListenEvents): () => void {
    const caps = this.serverCapabilities as Record<string, { listChanged?: boolean } | undefined>;
    const lists = Object.fromEntries(
      Object.entries(LIST_CHANGED_FILTERS)
        .filter(([list]) => caps[list]?.listChanged === true)
        .map(([, filter]) => [filter, true]),
    );
    const stop = new AbortController();
    const listen: ListenStream = { stop, opened: [] };
    this.listens.add(listen);
    // Those waiting for this stream to be (re)opened hear when it answers, or fails.
    const opened = () => listen.opened.splice(0).forEach((resolve) => resolve());
    void (async () => {
      let pauseMs = LISTEN_RETRY_MIN_MS;
      while (!stop.signal.aborted) {
        const uris = events.resourceSubscriptions();
        const filters = uris.length > 0 ? { ...lists, resourceSubscriptions: uris } : lists;
        if (Object.keys(filters).length === 0) {
          // Nothing to hear yet: wait for a resource to be watched (reopenListens).
          listen.stream = new AbortController();
          opened();
          await pause(2 ** 31 - 1, AbortSignal.any([stop.signal, listen.stream.signal]));
          continue;
        }
        listen.stream = new AbortController();
        const openedAt = Date.now();
        await this.listenOnce(filters, events, AbortSignal.any([stop.signal, listen.stream.signal]), opened).catch(
          () => undefined,
        );
        opened();
        if (listen.stream.signal.aborted) continue; // Reopened on purpose, with new filters.
        // A stream that stayed open a while was healthy: the next failure starts the pauses anew.
        pauseMs = Date.now() - openedAt > LISTEN_RETRY_MAX_MS ? LISTEN_RETRY_MIN_MS : pauseMs;
        await pause(pauseMs, stop.signal);
        pauseMs = Math.min(pauseMs * 2, LISTEN_RETRY_MAX_MS);
      }
    })();
    return () => {
      stop.abort();
      this.listens.delete(listen);
    };
  }

  /**
   * Opens its listen streams again, with the resources to watch as they are now; resolves once they
   * answered (or failed, or `LISTEN_REOPEN_WAIT_MS` passed), so an update sent after it is heard.
   */
  async reopenListens(): Promise<void> {
    const reopened = [...this.listens].map((listen) => {
      const answered = new Promise<void>((resolve) => listen.opened.push(resolve));
      listen.stream?.abort();
      return answered;
    });
    const signal = AbortSignal.timeout(LISTEN_REOPEN_WAIT_MS);
    await Promise.race([Promise.all(reopened), pause(LISTEN_REOPEN_WAIT_MS, signal)]);
  }

  private async listenOnce(
    filters: Record<string, unknown>,
    events: UpstreamListenEvents,
    signal: AbortSignal,
    opened: () => void,
  ): Promise<void> {
    const request = this.requestOf('subscriptions/listen', { notifications: filters }, {}, {});
    await this.wire.listen(request, signal, (m) => {
      opened(); // The first message is the acknowledgment.
      if (typeof m.method === 'string' && LIST_CHANGED_METHODS.has(m.method)) events.onListChanged();
      else if (m.method === 'notifications/resources/updated' && typeof m.params?.uri === 'string')
        events.onResourceUpdated(m.params.uri);
    });
  }

  private async exchange(
    method: string,
    params: Record<string, unknown>,
    relay: UpstreamCallRelay | undefined,
    clientCapabilities: ClientCapabilities,
    signal: AbortSignal,
    extraHeaders: Record<string, string>,
    propagation: UpstreamPropagation | undefined,
  ): Promise<JsonRpcAnswer> {
    return this.wire.exchange(
      this.requestOf(method, params, clientCapabilities, extraHeaders, relay, propagation),
      relay,
      signal,
    );
  }
}

/** A result the lean callers read, checked as the SDK client checks it (an invalid one throws as there). */
export function parseResult<S extends AnySchema>(schema: S, raw: unknown): SchemaOutput<S> {
  const parsed = safeParse(schema, raw);
  if (!parsed.success)
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid result: ${parsed.error instanceof Error ? parsed.error.message : String(parsed.error)}`,
    );
  return parsed.data as SchemaOutput<S>;
}

/** Waits `ms`, or less if `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
