import { StringDecoder } from 'node:string_decoder';
import { Dispatcher } from 'undici';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { mediaTypeOf } from '@tollgate/kernel';
import { outboundDispatcher } from '@tollgate/outbound';
import { createParser } from 'eventsource-parser';
import {
  JsonRpcAnswer,
  ListenMessage,
  StatelessWire,
  StatelessWireRequest,
  answerOf,
  relayToRequest,
} from './stateless-wire';
import { UpstreamCallRelay } from './upstream-call-relay';
import { headerValue } from './streamable-http-tool-caller';

const DISPATCHER = outboundDispatcher({ connections: 64, keepAliveTimeout: 60_000, headersTimeout: 0, bodyTimeout: 0 });

/** 2026-07-28 over Streamable HTTP: one POST per request (no session), on the shared dispatcher's sockets. */
export class HttpStatelessWire implements StatelessWire {
  readonly routingHeaders = true;
  private readonly origin: string;
  private readonly path: string;

  constructor(url: string) {
    const parsed = new URL(url);
    this.origin = parsed.origin;
    this.path = `${parsed.pathname}${parsed.search}`;
  }

  private post(request: StatelessWireRequest, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    return DISPATCHER.request({
      origin: this.origin,
      path: this.path,
      method: 'POST',
      headers: request.headers,
      body: JSON.stringify(request.message),
      signal,
    });
  }

  async exchange(
    request: StatelessWireRequest,
    relay: UpstreamCallRelay | undefined,
    signal: AbortSignal,
  ): Promise<JsonRpcAnswer> {
    const res = await this.post(request, signal);
    const type = mediaTypeOf(headerValue(res, 'content-type'));
    if (type === 'text/event-stream') return readAnswerStream(res, request.id, relay);
    const text = await res.body.text();
    // A refused credential, or an answer that is not MCP, is an HTTP error as the SDK transport
    // raises it (the pool tells the upstream's health and a 401 from it).
    if (res.statusCode === 401) throw new StreamableHTTPError(401, 'the upstream refused the credential');
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      throw new StreamableHTTPError(
        res.statusCode >= 300 ? res.statusCode : -1,
        `the upstream answered HTTP ${res.statusCode} without JSON-RPC`,
      );
    }
    const answer = answerOf(message, request.id);
    if (!answer)
      throw new StreamableHTTPError(
        res.statusCode >= 300 ? res.statusCode : -1,
        `the upstream answered HTTP ${res.statusCode} without a response to the request`,
      );
    return answer;
  }

  async listen(
    request: StatelessWireRequest,
    signal: AbortSignal,
    onMessage: (message: ListenMessage) => void,
  ): Promise<void> {
    const res = await this.post(request, signal);
    if (mediaTypeOf(headerValue(res, 'content-type')) !== 'text/event-stream') {
      await res.body.dump();
      return;
    }
    const parser = createParser({
      onEvent: (event) => {
        let m: ListenMessage = {};
        try {
          m = JSON.parse(event.data) as ListenMessage;
        } catch {
          // An event that is not JSON still says the stream is open.
        }
        onMessage(m);
      },
    });
    const decoder = new StringDecoder('utf8');
    await new Promise<void>((resolve) => {
      res.body.on('data', (chunk: Buffer) => parser.feed(decoder.write(chunk)));
      res.body.on('error', () => resolve());
      res.body.on('close', () => resolve());
    });
  }

  /** Nothing to close: the sockets are the shared dispatcher's. */
  async close(): Promise<void> {}
}

// Progress (under our token) and log messages go to the relay until the response arrives.
function readAnswerStream(
  res: Dispatcher.ResponseData,
  id: string,
  relay: UpstreamCallRelay | undefined,
): Promise<JsonRpcAnswer> {
  return new Promise((resolve, reject) => {
    let answer: JsonRpcAnswer | undefined;
    const parser = createParser({
      onEvent: (event) => {
        if (answer || !event.data) return;
        let m: Record<string, unknown>;
        try {
          m = JSON.parse(event.data) as Record<string, unknown>;
        } catch {
          return;
        }
        if (relayToRequest(m.method, (m.params ?? {}) as Record<string, unknown>, id, relay)) return;
        if ((answer = answerOf(m, id))) {
          resolve(answer);
          res.body.destroy();
        }
      },
    });
    const decoder = new StringDecoder('utf8');
    res.body.on('data', (chunk: Buffer) => parser.feed(decoder.write(chunk)));
    res.body.on('error', (err) => {
      if (!answer) reject(err);
    });
    res.body.on('close', () => {
      if (!answer)
        reject(new McpError(ErrorCode.ConnectionClosed, 'the upstream closed the answer stream before answering'));
    });
  });
}
