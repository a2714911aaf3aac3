import http, { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { urlToHttpOptions } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResult, CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { mediaTypeOf } from '@tollgate/kernel';
import { createParser } from 'eventsource-parser';
import { keepAliveAgentFor } from './keep-alive-fetch';
import { UpstreamSessionExpiredError } from './upstream-session-expired.error';

const ACCEPT_ANSWER = 'application/json, text/event-stream';
/** The redirects the SDK transport follows for a POST (same-origin, method kept). */
const METHOD_KEEPING_REDIRECTS = new Set([307, 308]);
// Reconnection to a resumable answer stream, as the SDK transport's defaults: 1 s, growing by 1.5,
// at most 30 s, and two failed attempts in a row end the call.
const RESUME_FIRST_DELAY_MS = 1000;
const RESUME_DELAY_GROWTH = 1.5;
const RESUME_MAX_DELAY_MS = 30_000;
const RESUME_MAX_FAILURES = 2;
/** Marks an answer the SDK client must take over: the upstream redirected the call. */
const REDIRECTED = Symbol('redirected');

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
  private readonly target: http.RequestOptions;
  private readonly request: typeof http.request;
  // Set once the upstream redirected a call: from then on the SDK client, which follows same-origin redirects, makes the calls.
  private redirected = false;

  private constructor(
    private readonly client: Client,
    private readonly transport: StreamableHTTPClientTransport,
    url: URL,
    private readonly headers: Record<string, string>,
    private readonly onToolListChanged: () => void,
  ) {
    this.target = { ...urlToHttpOptions(url), agent: keepAliveAgentFor(url) };
    this.request = url.protocol === 'https:' ? https.request : http.request;
  }

  /** A caller for `client`'s session, or undefined if the client is not connected over Streamable HTTP. */
  static forClient(client: Client, url: URL, headers: Record<string, string>, onToolListChanged: () => void): StreamableHttpToolCaller | undefined {
    const transport = client.transport;
    return transport instanceof StreamableHTTPClientTransport ? new StreamableHttpToolCaller(client, transport, url, headers, onToolListChanged) : undefined;
  }

  async callTool(name: string, args: Record<string, unknown> | undefined, { timeoutMs, signal }: ToolCallOptions): Promise<CallToolResult> {
    if (this.redirected) return this.callThroughSdk(name, args, timeoutMs, signal);
    signal?.throwIfAborted();
    const id = `tollgate-${++lastCallId}`;
    const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    // One signal for the whole exchange: the call's timeout and the caller's abort both end it.
    const call = new AbortController();
    const timer = setTimeout(() => call.abort(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs })), timeoutMs);
    const onCallerAbort = () => call.abort(new McpError(ErrorCode.RequestTimeout, String(signal?.reason)));
    signal?.addEventListener('abort', onCallerAbort, { once: true });
    let answer: JsonRpcAnswer | typeof REDIRECTED;
    try {
      answer = await this.exchange(id, body, call.signal);
    } catch (err) {
      if (!call.signal.aborted) throw err;
      this.notifyCancelled(id, call.signal.reason);
      throw call.signal.reason;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onCallerAbort);
    }
    if (answer === REDIRECTED) {
      this.redirected = true;
      return this.callThroughSdk(name, args, timeoutMs, signal);
    }
    if (answer.error) throw McpError.fromError(answer.error.code, answer.error.message, answer.error.data);
    const parsed = CallToolResultSchema.safeParse(answer.result);
    if (!parsed.success) throw parsed.error;
    return parsed.data;
  }

  private async callThroughSdk(name: string, args: Record<string, unknown> | undefined, timeoutMs: number, signal: AbortSignal | undefined): Promise<CallToolResult> {
    return (await this.client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs, signal })) as CallToolResult;
  }

  // POSTs the call and reads the answer, a JSON body or an event stream. Every wait ends when `signal` aborts.
  private async exchange(id: string, body: string, signal: AbortSignal): Promise<JsonRpcAnswer | typeof REDIRECTED> {
    const sessionSent = this.transport.sessionId !== undefined;
    const res = await this.send('POST', this.postHeaders(body), body, signal);
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      if (status === 404 && sessionSent) {
        res.resume();
        throw new UpstreamSessionExpiredError();
      }
      if (METHOD_KEEPING_REDIRECTS.has(status) && res.headers.location) {
        res.resume();
        return REDIRECTED;
      }
      const text = await readText(res).catch(() => '');
      throw new StreamableHTTPError(status, `Error POSTing to endpoint: ${text.slice(0, 500)}`);
    }
    const mediaType = mediaTypeOf(res.headers['content-type']);
    if (mediaType === 'application/json') {
      const answer = this.takeAnswer(JSON.parse(await readText(res)), id);
      if (!answer) throw new StreamableHTTPError(-1, 'the upstream answered without a response to the call');
      return answer;
    }
    if (mediaType === 'text/event-stream') return this.readAnswerStreams(res, id, signal);
    res.resume();
    throw new StreamableHTTPError(-1, `Unexpected content type: ${res.headers['content-type']}`);
  }

  // Reads the answer stream until our response arrives. A server may close the stream after an
  // event id and expect the client to come back for the rest (resumability): then we reconnect with
  // GET and `Last-Event-ID`, as the SDK transport does.
  private async readAnswerStreams(first: IncomingMessage, id: string, signal: AbortSignal): Promise<JsonRpcAnswer> {
    const cursor: StreamCursor = {};
    let stream = first;
    for (;;) {
      const answer = await this.readAnswerStream(stream, id, cursor);
      if (answer) return answer;
      signal.throwIfAborted();
      if (cursor.lastEventId === undefined) throw new StreamableHTTPError(-1, 'the upstream closed the answer stream before answering');
      stream = await this.resumeStream(cursor, signal);
    }
  }

  private async resumeStream(cursor: StreamCursor, signal: AbortSignal): Promise<IncomingMessage> {
    for (let failures = 0; ; ) {
      const delay = cursor.retryMs ?? Math.min(RESUME_FIRST_DELAY_MS * RESUME_DELAY_GROWTH ** failures, RESUME_MAX_DELAY_MS);
      await sleep(delay, undefined, { signal });
      try {
        const headers: OutgoingHttpHeaders = this.commonHeaders();
        headers.accept = 'text/event-stream';
        headers['last-event-id'] = cursor.lastEventId;
        const res = await this.send('GET', headers, undefined, signal);
        const status = res.statusCode ?? 0;
        if (status >= 200 && status <= 299) return res;
        res.resume();
        throw new StreamableHTTPError(status, `Failed to open SSE stream: ${res.statusMessage ?? ''}`);
      } catch (err) {
        signal.throwIfAborted();
        if (++failures >= RESUME_MAX_FAILURES) throw err;
      }
    }
  }

  // Resolves with our response, or with undefined when the stream ends without it.
  private readAnswerStream(res: IncomingMessage, id: string, cursor: StreamCursor): Promise<JsonRpcAnswer | undefined> {
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
          answer = this.takeAnswer(message, id);
          if (answer) resolve(answer);
        },
        onRetry: (ms) => (cursor.retryMs = ms),
      });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => parser.feed(chunk));
      // A broken stream is told apart from an ended one by nothing here: both may be resumed.
      res.on('error', () => undefined);
      res.on('close', () => {
        if (!answer) resolve(undefined);
      });
    });
  }

  // Acts on the JSON-RPC message(s) of one body or event; returns the response to call `id` if among them.
  private takeAnswer(parsed: unknown, id: string): JsonRpcAnswer | undefined {
    if (!Array.isArray(parsed)) return this.takeMessage(parsed, id);
    let answer: JsonRpcAnswer | undefined;
    for (const message of parsed) answer = this.takeMessage(message, id) ?? answer;
    return answer;
  }

  private takeMessage(message: unknown, id: string): JsonRpcAnswer | undefined {
    if (typeof message !== 'object' || message === null) return undefined;
    const m = message as Record<string, unknown>;
    if (m.jsonrpc !== '2.0') return undefined;
    if (typeof m.method === 'string') {
      if (typeof m.id === 'string' || typeof m.id === 'number') this.answerServerRequest(m.method, m.id);
      else if (m.method === 'notifications/tools/list_changed') this.onToolListChanged();
      // Other notifications (progress, log messages) go unheard, as with the SDK client, which has no handler for them.
      return undefined;
    }
    if (m.id !== id) return undefined;
    if ('result' in m) return { result: m.result };
    const error = m.error as JsonRpcAnswer['error'];
    if (error && typeof error.code === 'number' && typeof error.message === 'string') return { error };
    return undefined;
  }

  // Answers a request the server sent mid-call, as the SDK client with no handlers does.
  private answerServerRequest(method: string, requestId: string | number): void {
    this.postAndForget(
      method === 'ping'
        ? { jsonrpc: '2.0', id: requestId, result: {} }
        : { jsonrpc: '2.0', id: requestId, error: { code: ErrorCode.MethodNotFound, message: 'Method not found' } },
    );
  }

  private notifyCancelled(id: string, reason: unknown): void {
    this.postAndForget({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: reason instanceof Error ? reason.message : String(reason) } });
  }

  private postAndForget(message: object): void {
    const body = JSON.stringify(message);
    // Nothing waits on these (a cancellation, an answer to the server): if one is lost, only the
    // upstream's side of it fails, as with the SDK client, which reports them to no one either.
    this.send('POST', this.postHeaders(body), body).then(
      (res) => res.resume(),
      () => undefined,
    );
  }

  // The headers the SDK transport sends: session and protocol version, then the upstream's (or user's) own, which win.
  private commonHeaders(): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = {};
    const sessionId = this.transport.sessionId;
    if (sessionId) headers['mcp-session-id'] = sessionId;
    const protocolVersion = this.transport.protocolVersion;
    if (protocolVersion) headers['mcp-protocol-version'] = protocolVersion;
    return Object.assign(headers, this.headers);
  }

  private postHeaders(body: string): OutgoingHttpHeaders {
    const headers = this.commonHeaders();
    headers['content-type'] = 'application/json';
    headers.accept = ACCEPT_ANSWER;
    headers['content-length'] = Buffer.byteLength(body);
    return headers;
  }

  // Resolves with the response once its head arrives; `signal` destroys the request, whatever stage it is at.
  private send(method: 'GET' | 'POST', headers: OutgoingHttpHeaders, body: string | undefined, signal?: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = this.request({ ...this.target, method, headers }, resolve);
      req.on('error', reject);
      if (signal) {
        const onAbort = () => req.destroy(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
        signal.addEventListener('abort', onAbort, { once: true });
        req.once('close', () => signal.removeEventListener('abort', onAbort));
      }
      req.end(body);
    });
  }
}

function readText(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.on('end', () => resolve(text));
    res.on('error', reject);
    res.on('close', () => {
      if (!res.complete) reject(new Error('the upstream connection closed mid-answer'));
    });
  });
}
