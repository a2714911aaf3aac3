import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import {
  JsonRpcAnswer,
  ListenMessage,
  StatelessWire,
  StatelessWireRequest,
  answerOf,
  relayedProgressOf,
} from './stateless-wire';
import { UpstreamCallRelay } from './upstream-call-relay';

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

interface InFlight {
  relay?: UpstreamCallRelay;
  settle(answer: JsonRpcAnswer | Error): void;
}

interface OpenListen {
  onMessage(message: ListenMessage): void;
  end(): void;
}

/**
 * 2026-07-28 over stdio: newline-delimited JSON-RPC on one spawned process (started by the SDK's
 * transport, which keeps its environment filtering, stderr pipe and kill on close). Answers are
 * matched by id, progress by its token, listen notifications by their subscription id. Log
 * messages name no request on this wire: they go to the only request in flight with a relay, or
 * nowhere. The process's exit fails every request in flight with `ConnectionClosed`.
 */
export class StdioStatelessWire implements StatelessWire {
  readonly routingHeaders = false;
  onclose?: () => void;
  private readonly inFlight = new Map<string, InFlight>();
  private readonly listens = new Map<string, OpenListen>();
  private closed?: McpError;

  constructor(private readonly transport: StdioClientTransport) {
    transport.onmessage = (message) => this.receive(message);
    // A broken pipe or an unparseable line: the exit that follows (if any) is what fails the requests.
    transport.onerror = () => undefined;
    transport.onclose = () => this.ended();
  }

  /** Whether the process exited. */
  get exited(): boolean {
    return this.closed !== undefined;
  }

  /** Stops reading the process, for a client of another revision to take it over. */
  release(): void {
    this.inFlight.clear();
    this.listens.clear();
    this.transport.onmessage = undefined;
    this.transport.onerror = undefined;
    this.transport.onclose = undefined;
  }

  exchange(
    request: StatelessWireRequest,
    relay: UpstreamCallRelay | undefined,
    signal: AbortSignal,
  ): Promise<JsonRpcAnswer> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(this.closed);
      const onAbort = () => {
        this.cancel(request.id, signal.reason);
        settle(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
      };
      const settle = (answer: JsonRpcAnswer | Error) => {
        this.inFlight.delete(request.id);
        signal.removeEventListener('abort', onAbort);
        if (answer instanceof Error) reject(answer);
        else resolve(answer);
      };
      if (signal.aborted) return onAbort();
      this.inFlight.set(request.id, { relay, settle });
      signal.addEventListener('abort', onAbort, { once: true });
      this.transport.send(request.message as JSONRPCMessage).catch(settle);
    });
  }

  listen(
    request: StatelessWireRequest,
    signal: AbortSignal,
    onMessage: (message: ListenMessage) => void,
  ): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed || signal.aborted) return resolve();
      const onAbort = () => {
        this.cancel(request.id, 'the listen stream is reopened or closed');
        end();
      };
      const end = () => {
        this.listens.delete(request.id);
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.listens.set(request.id, { onMessage, end });
      signal.addEventListener('abort', onAbort, { once: true });
      this.transport.send(request.message as JSONRPCMessage).catch(end);
    });
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  private cancel(id: string, reason: unknown): void {
    if (this.closed) return;
    this.listens.delete(id);
    void this.transport
      .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(reason) } })
      .catch(() => undefined);
  }

  private receive(message: JSONRPCMessage): void {
    const m = message as { id?: unknown; method?: unknown; params?: Record<string, unknown> };
    if (typeof m.method !== 'string') {
      const id = String(m.id);
      const call = this.inFlight.get(id);
      if (call)
        call.settle(
          answerOf(m, id) ??
            new McpError(ErrorCode.InvalidRequest, `the upstream answered request ${id} without a result or an error`),
        );
      // The listen's final answer: the upstream ended the stream.
      this.listens.get(id)?.end();
      return;
    }
    if (m.id !== undefined) {
      // A server request on a revision that has none (input comes back in results instead).
      void this.transport
        .send({
          jsonrpc: '2.0',
          id: m.id as string | number,
          error: { code: ErrorCode.MethodNotFound, message: `${m.method} is not served on 2026-07-28` },
        })
        .catch(() => undefined);
      return;
    }
    const params = m.params ?? {};
    const subscription = (params._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID];
    if (subscription !== undefined) {
      this.listens.get(String(subscription))?.onMessage(m as ListenMessage);
      return;
    }
    if (m.method === 'notifications/progress') {
      const progress = relayedProgressOf(params);
      if (progress) this.inFlight.get(String(params.progressToken))?.relay?.progress?.(progress);
    } else if (m.method === 'notifications/message' && typeof params.level === 'string') {
      const relayed = [...this.inFlight.values()].filter((call) => call.relay);
      if (relayed.length === 1) relayed[0].relay!.log(params as never);
    }
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = new McpError(ErrorCode.ConnectionClosed, 'the upstream process exited');
    for (const call of [...this.inFlight.values()]) call.settle(this.closed);
    for (const listen of [...this.listens.values()]) listen.end();
    this.onclose?.();
  }
}
