import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';
import { Dispatcher } from 'undici';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  McpError,
  ResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { mediaTypeOf } from '@tollgate/kernel';
import { outboundDispatcher } from '@tollgate/outbound';
import { createParser } from 'eventsource-parser';
import { RELAYED_CLIENT_REQUESTS, UpstreamCallRelay, undeclaredCapability } from './upstream-call-relay';
import { throughSdkClient, upstreamAnswerError } from './upstream-answer';
import { UpstreamSessionExpiredError } from './upstream-session-expired.error';
import type { UpstreamPropagation } from './upstream-propagation';
import { relayToRequest } from './stateless-wire';

const ACCEPT_ANSWER = 'application/json, text/event-stream';
/** The redirects the SDK transport follows for a POST (same-origin, method kept). */
const METHOD_KEEPING_REDIRECTS = new Set([307, 308]);
// Reconnection to a resumable answer stream, as the SDK transport's defaults: 1 s, growing by 1.5,
// at most 30 s, and two failed attempts in a row end the call.
const RESUME_FIRST_DELAY_MS = 1000;
const RESUME_DELAY_GROWTH = 1.5;
const RESUME_MAX_DELAY_MS = 30_000;
const RESUME_MAX_FAILURES = 2;
/** Announcements that the upstream's catalog changed (a sync is due). */
const LIST_CHANGED = new Set([
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
]);
/** Marks an answer the SDK client must take over: the upstream redirected the call. */
const REDIRECTED = Symbol('redirected');

/**
 * The connection pools of every lean call (per origin, keep-alive). undici's request costs about
 * half the CPU of node:http's per call, and the call is most of what an edge does. Each new
 * connection goes only to an address the outbound rule allows.
 */
const UPSTREAM_DISPATCHER = outboundDispatcher({
  connections: 256,
  keepAliveTimeout: 60_000,
  // The call's own timer (the upstream's callTimeoutMs, up to 10 minutes) ends a call; undici's
  // defaults (300 s for headers and between body chunks) would cut long calls and quiet streams.
  headersTimeout: 0,
  bodyTimeout: 0,
});

/** Connection-level headers undici manages itself and refuses from callers; an upstream's configured headers never carry them. */
export const CONNECTION_HEADERS = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'expect',
  'host',
  'content-length',
]);

type Headers = Record<string, string>;
type UpstreamResponse = Dispatcher.ResponseData;

/** The response to our `tools/call`, as it came off the wire. */
interface JsonRpcAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** Where a resumable answer stream stands: the last event id seen and the server's retry advice. */
interface StreamCursor {
  lastEventId?: string;
  retryMs?: number;
}

export interface ToolCallOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** The agent's side of the call: progress, log messages and requests on the answer stream go to it. */
  relay?: UpstreamCallRelay;
  /** The call's trace context and request id, in the headers and `params._meta` (a governed `tools/call`'s). */
  propagation?: UpstreamPropagation;
}

/** One call's exchange: its id, the agent's relay, the signal that ends it, and what its POSTs carry. */
interface LeanCall {
  id: string;
  relay?: UpstreamCallRelay;
  signal: AbortSignal;
  propagation?: UpstreamPropagation;
}

// Our calls take string ids: the SDK client numbers its own requests 0, 1, 2... on the same session.
let lastCallId = 0;

/**
 * Calls tools on a Streamable HTTP upstream over the pooled SDK client's session, without the SDK's
 * per-message machinery (Web Request/Response objects, a zod parse of every message, the response
 * router): one POST on the keep-alive agent, one JSON parse, one `CallToolResultSchema` parse. The
 * SDK client still owns the session: initialize, the session id and protocol version it negotiated,
 * the GET stream that brings `tools/list_changed`, and close.
 *
 * It answers as the SDK client with no request handlers would: a server's `ping` gets `{}`, any
 * other request "method not found"; a timeout or abort sends `notifications/cancelled`. Errors are
 * the ones the SDK client raises (`McpError`, `StreamableHTTPError`, the zod error of a malformed
 * result), plus `UpstreamSessionExpiredError` when the upstream forgot the session.
 */
export class StreamableHttpToolCaller {
  private readonly origin: string;
  private readonly path: string;
  // The upstream's (or user's) configured headers less the connection-level ones, filtered once.
  private readonly ownHeaders: [string, string][];
  // Set once the upstream redirected a call: from then on the SDK client, which follows same-origin redirects, makes the calls.
  private redirected = false;

  private constructor(
    private readonly client: Client,
    private readonly transport: StreamableHTTPClientTransport,
    url: URL,
    headers: Record<string, string>,
    private readonly onToolListChanged: () => void,
  ) {
    this.origin = url.origin;
    this.path = `${url.pathname}${url.search}`;
    this.ownHeaders = Object.entries(headers).filter(([name]) => !CONNECTION_HEADERS.has(name.toLowerCase()));
  }

  /** A caller for `client`'s session, or undefined if the client is not connected over Streamable HTTP. */
  static forClient(
    client: Client,
    url: URL,
    headers: Record<string, string>,
    onToolListChanged: () => void,
  ): StreamableHttpToolCaller | undefined {
    const transport = client.transport;
    return transport instanceof StreamableHTTPClientTransport
      ? new StreamableHttpToolCaller(client, transport, url, headers, onToolListChanged)
      : undefined;
  }

  async callTool(
    name: string,
    args: Record<string, unknown> | undefined,
    options: ToolCallOptions,
  ): Promise<CallToolResult> {
    const { timeoutMs, signal, relay } = options;
    if (this.redirected) return this.callThroughSdk(name, args, timeoutMs, signal, relay);
    // A 2025-11-25 agent's task augmentation goes on as it came (the upstream may answer a CreateTaskResult).
    const task = relay?.task ? { task: relay.task } : {};
    const answer = await this.call('tools/call', { name, arguments: args, ...task }, options);
    if (answer === REDIRECTED) {
      this.redirected = true;
      return this.callThroughSdk(name, args, timeoutMs, signal, relay);
    }
    const plain = plainTextResult(answer);
    if (plain) return plain;
    const parsed = CallToolResultSchema.safeParse(answer);
    if (!parsed.success) throw parsed.error;
    return parsed.data;
  }

  /**
   * Any other request on the session (prompts/get, resources/read...), the same way: what the
   * upstream sends on its answer stream goes to the relay. Resolves with the raw result.
   */
  async request(
    method: string,
    params: Record<string, unknown> | undefined,
    options: ToolCallOptions,
  ): Promise<unknown> {
    const { timeoutMs, signal } = options;
    const throughSdk = () =>
      throughSdkClient(this.client, timeoutMs, () =>
        this.client.request({ method, params } as never, ResultSchema, { timeout: timeoutMs, signal }),
      );
    if (this.redirected) return throughSdk();
    const answer = await this.call(method, params, options);
    if (answer !== REDIRECTED) return answer;
    this.redirected = true;
    return throughSdk();
  }

  // One request and its answer's result (an error answer throws its McpError).
  private async call(
    method: string,
    requestParams: Record<string, unknown> | undefined,
    { timeoutMs, signal, relay, propagation }: ToolCallOptions,
  ): Promise<unknown> {
    signal?.throwIfAborted();
    const id = `tollgate-${++lastCallId}`;
    // The trace context, and the call's own id as its progress token (progress on the answer stream
    // is matched to it); most calls carry neither, and get no `_meta` object made for nothing.
    let extraMeta: Record<string, unknown> | undefined;
    if (propagation && !isEmpty(propagation.meta)) extraMeta = { ...propagation.meta };
    if (relay?.progress) (extraMeta ??= {}).progressToken = id;
    const params = extraMeta
      ? { ...requestParams, _meta: { ...(requestParams?._meta as object | undefined), ...extraMeta } }
      : requestParams;
    const body = JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
    // One signal for the whole exchange: the call's timeout and the caller's abort both end it.
    const call = new AbortController();
    const timer = setTimeout(
      () => call.abort(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs })),
      timeoutMs,
    );
    const onCallerAbort = () => call.abort(new McpError(ErrorCode.RequestTimeout, String(signal?.reason)));
    signal?.addEventListener('abort', onCallerAbort, { once: true });
    let answer: JsonRpcAnswer | typeof REDIRECTED;
    try {
      answer = await this.exchange({ id, relay, signal: call.signal, propagation }, body);
    } catch (err) {
      if (!call.signal.aborted) throw err;
      this.notifyCancelled(id, call.signal.reason, propagation);
      throw call.signal.reason;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onCallerAbort);
    }
    if (answer === REDIRECTED) return REDIRECTED;
    if (answer.error) throw upstreamAnswerError(answer.error.code, answer.error.message, answer.error.data);
    return answer.result;
  }

  private async callThroughSdk(
    name: string,
    args: Record<string, unknown> | undefined,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    relay: UpstreamCallRelay | undefined,
  ): Promise<CallToolResult> {
    const progress = relay?.progress ? { onprogress: relay.progress, resetTimeoutOnProgress: true } : {};
    return (await throughSdkClient(this.client, timeoutMs, () =>
      this.client.callTool({ name, arguments: args, ...(relay?.task ? { task: relay.task } : {}) }, undefined, {
        timeout: timeoutMs,
        signal,
        ...progress,
      }),
    )) as CallToolResult;
  }

  // POSTs the call and reads the answer, a JSON body or an event stream. Every wait ends when `signal` aborts.
  private async exchange(call: LeanCall, body: string): Promise<JsonRpcAnswer | typeof REDIRECTED> {
    const sessionSent = this.transport.sessionId !== undefined;
    const res = await this.send('POST', this.postHeaders(call.propagation), body, call.signal);
    const status = res.statusCode;
    if (status < 200 || status > 299) {
      if (status === 404 && sessionSent) {
        discard(res);
        throw new UpstreamSessionExpiredError();
      }
      if (METHOD_KEEPING_REDIRECTS.has(status) && res.headers.location) {
        discard(res);
        return REDIRECTED;
      }
      const text = await res.body.text().catch(() => '');
      throw new StreamableHTTPError(status, `Error POSTing to endpoint: ${text.slice(0, 500)}`);
    }
    const mediaType = mediaTypeOf(headerValue(res, 'content-type'));
    if (mediaType === 'application/json') {
      const answer = this.takeAnswer(JSON.parse(await res.body.text()), call);
      if (!answer) throw new StreamableHTTPError(-1, 'the upstream answered without a response to the call');
      return answer;
    }
    if (mediaType === 'text/event-stream') return this.readAnswerStreams(res, call);
    discard(res);
    throw new StreamableHTTPError(-1, `Unexpected content type: ${headerValue(res, 'content-type')}`);
  }

  // Reads the answer stream until our response arrives. A server may close the stream after an
  // event id and expect the client to come back for the rest (resumability): then we reconnect with
  // GET and `Last-Event-ID`, as the SDK transport does.
  private async readAnswerStreams(first: UpstreamResponse, call: LeanCall): Promise<JsonRpcAnswer> {
    const cursor: StreamCursor = {};
    let stream = first;
    for (;;) {
      const answer = await this.readAnswerStream(stream, call, cursor);
      if (answer) return answer;
      call.signal.throwIfAborted();
      if (cursor.lastEventId === undefined)
        throw new StreamableHTTPError(-1, 'the upstream closed the answer stream before answering');
      stream = await this.resumeStream(cursor, call.signal);
    }
  }

  private async resumeStream(cursor: StreamCursor, signal: AbortSignal): Promise<UpstreamResponse> {
    for (let failures = 0; ;) {
      const delay =
        cursor.retryMs ?? Math.min(RESUME_FIRST_DELAY_MS * RESUME_DELAY_GROWTH ** failures, RESUME_MAX_DELAY_MS);
      await sleep(delay, undefined, { signal });
      try {
        const headers = this.commonHeaders();
        headers.accept = 'text/event-stream';
        if (cursor.lastEventId !== undefined) headers['last-event-id'] = cursor.lastEventId;
        const res = await this.send('GET', headers, undefined, signal);
        const status = res.statusCode;
        if (status >= 200 && status <= 299) return res;
        discard(res);
        throw new StreamableHTTPError(status, `Failed to open SSE stream: HTTP ${status}`);
      } catch (err) {
        signal.throwIfAborted();
        if (++failures >= RESUME_MAX_FAILURES) throw err;
      }
    }
  }

  // Resolves with our response, or with undefined when the stream ends without it.
  private readAnswerStream(
    res: UpstreamResponse,
    call: LeanCall,
    cursor: StreamCursor,
  ): Promise<JsonRpcAnswer | undefined> {
    return new Promise((resolve) => {
      let answer: JsonRpcAnswer | undefined;
      const parser = createParser({
        onEvent: (event) => {
          if (event.id) cursor.lastEventId = event.id;
          // Priming events and keep-alives carry no data; other event types are not JSON-RPC.
          if (answer || !event.data || (event.event && event.event !== 'message')) return;
          let message: unknown;
          try {
            message = JSON.parse(event.data);
          } catch {
            return; // The SDK client skips an event it cannot parse, and so do we.
          }
          answer = this.takeAnswer(message, call);
          if (answer) {
            resolve(answer);
            // Nothing after our answer matters to this call: free the pooled connection now.
            res.body.destroy();
          }
        },
        onRetry: (ms) => (cursor.retryMs = ms),
      });
      const body = res.body;
      // undici's body ignores setEncoding: decode here (a character may span two chunks).
      const decoder = new StringDecoder('utf8');
      body.on('data', (chunk: Buffer) => parser.feed(decoder.write(chunk)));
      // A broken stream is told apart from an ended one by nothing here: both may be resumed.
      body.on('error', () => undefined);
      body.on('close', () => {
        if (!answer) resolve(undefined);
      });
    });
  }

  // Acts on the JSON-RPC message(s) of one body or event; returns the response to call `id` if among them.
  private takeAnswer(parsed: unknown, call: LeanCall): JsonRpcAnswer | undefined {
    if (!Array.isArray(parsed)) return this.takeMessage(parsed, call);
    let answer: JsonRpcAnswer | undefined;
    for (const message of parsed) answer = this.takeMessage(message, call) ?? answer;
    return answer;
  }

  private takeMessage(message: unknown, call: LeanCall): JsonRpcAnswer | undefined {
    if (typeof message !== 'object' || message === null) return undefined;
    const m = message as Record<string, unknown>;
    if (m.jsonrpc !== '2.0') return undefined;
    if (typeof m.method === 'string') {
      const params =
        typeof m.params === 'object' && m.params !== null ? (m.params as Record<string, unknown>) : undefined;
      if (typeof m.id === 'string' || typeof m.id === 'number') this.answerServerRequest(m.method, m.id, params, call);
      else if (LIST_CHANGED.has(m.method)) this.onToolListChanged();
      else if (call.relay && params) relayToRequest(m.method, params, call.id, call.relay);
      // Without a relay (the agent has no stream), progress and log messages go unheard.
      return undefined;
    }
    if (m.id !== call.id) return undefined;
    if ('result' in m) return { result: m.result };
    const error = m.error as JsonRpcAnswer['error'];
    if (error && typeof error.code === 'number' && typeof error.message === 'string') return { error };
    return undefined;
  }

  // Answers a request the server sent mid-call: ping here, the agent's client for what it relays.
  private answerServerRequest(
    method: string,
    requestId: string | number,
    params: Record<string, unknown> | undefined,
    call: LeanCall,
  ): void {
    const answer = (outcome: { result: unknown } | { error: { code: number; message: string; data?: unknown } }) =>
      this.postAndForget({ jsonrpc: '2.0', id: requestId, ...outcome }, call.propagation);
    if (method === 'ping') return answer({ result: {} });
    if (!RELAYED_CLIENT_REQUESTS.has(method))
      return answer({ error: { code: ErrorCode.MethodNotFound, message: 'Method not found' } });
    if (!call.relay) return answer({ error: errorOf(undeclaredCapability(method)) });
    call.relay.request(method, params, call.signal).then(
      (result) => answer({ result }),
      (err: unknown) => answer({ error: errorOf(err) }),
    );
  }

  private notifyCancelled(id: string, reason: unknown, propagation: UpstreamPropagation | undefined): void {
    this.postAndForget(
      {
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason: reason instanceof Error ? reason.message : String(reason) },
      },
      propagation,
    );
  }

  private postAndForget(message: object, propagation: UpstreamPropagation | undefined): void {
    const body = JSON.stringify(message);
    // Nothing waits on these (a cancellation, an answer to the server): if one is lost, only the
    // upstream's side of it fails, as with the SDK client, which reports them to no one either.
    this.send('POST', this.postHeaders(propagation), body).then(
      (res) => discard(res),
      () => undefined,
    );
  }

  // The headers the SDK transport sends: session and protocol version, then the upstream's (or
  // user's) own, which win; after `first`, if given.
  private commonHeaders(first?: Headers): Headers {
    const headers: Headers = first ? { ...first } : {};
    const sessionId = this.transport.sessionId;
    if (sessionId) headers['mcp-session-id'] = sessionId;
    const protocolVersion = this.transport.protocolVersion;
    if (protocolVersion) headers['mcp-protocol-version'] = protocolVersion;
    for (const [name, value] of this.ownHeaders) headers[name] = value;
    return headers;
  }

  private postHeaders(propagation: UpstreamPropagation | undefined): Headers {
    // Trace context and request id first: the upstream's own configured headers win.
    const headers = this.commonHeaders(propagation?.headers);
    headers['content-type'] = 'application/json';
    headers.accept = ACCEPT_ANSWER;
    return headers;
  }

  // Resolves with the response once its head arrives; `signal` ends the request, whatever stage it is at.
  private send(
    method: 'GET' | 'POST',
    headers: Headers,
    body: string | undefined,
    signal?: AbortSignal,
  ): Promise<UpstreamResponse> {
    return UPSTREAM_DISPATCHER.request({ origin: this.origin, path: this.path, method, headers, body, signal });
  }
}

function isEmpty(record: Record<string, unknown>): boolean {
  for (const _ in record) return false;
  return true;
}

function errorOf(err: unknown): { code: number; message: string; data?: unknown } {
  const e = err as { code?: unknown; message?: unknown; data?: unknown };
  if (typeof e?.code !== 'number' || typeof e.message !== 'string')
    return { code: ErrorCode.InternalError, message: err instanceof Error ? err.message : String(err) };
  const message = err instanceof McpError ? e.message.replace(/^MCP error -?\d+: /, '') : e.message;
  return { code: e.code, message, ...(e.data !== undefined ? { data: e.data } : {}) };
}

/** Drops an answer's body we do not read, so its connection goes back to the pool. */
function discard(res: UpstreamResponse): void {
  res.body.dump().catch(() => undefined);
}

/** A response header's (first) value. */
export function headerValue(res: UpstreamResponse, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The most common result, text blocks and nothing else, checked by hand: exactly what
 * `CallToolResultSchema` would make of it (the same object), without the schema's cost on every
 * call. Anything else (other block kinds, annotations, `_meta`, structured content) returns null
 * and goes through the schema.
 */
export function plainTextResult(result: unknown): CallToolResult | null {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return null;
  const r = result as Record<string, unknown>;
  if (
    r._meta !== undefined ||
    r.structuredContent !== undefined ||
    (r.isError !== undefined && typeof r.isError !== 'boolean')
  )
    return null;
  if (!Array.isArray(r.content)) return null;
  for (const block of r.content as unknown[]) {
    if (typeof block !== 'object' || block === null || Array.isArray(block)) return null;
    const b = block as Record<string, unknown>;
    if (b.type !== 'text' || typeof b.text !== 'string') return null;
    for (const key in b) if (key !== 'type' && key !== 'text') return null;
  }
  return r as CallToolResult;
}
