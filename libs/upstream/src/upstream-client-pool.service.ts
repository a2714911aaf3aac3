import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResult, ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { CircuitBreaker } from './circuit-breaker';
import { connectUpstream } from './upstream-connector';
import { UpstreamException, UpstreamExceptionCode } from './upstream.exception';
import { UpstreamSpec } from './upstream-spec';

interface PooledClient {
  version: string;
  client: Promise<Client>;
}

type ListChangedHandler = (spec: UpstreamSpec) => void;

/**
 * One long-lived MCP client per upstream per process (per user too, once per-user OAuth lands):
 * connected on first use, replaced when the upstream's settings change or its transport closes,
 * guarded by a circuit breaker so a dead upstream fails fast instead of tying up callers.
 */
@Injectable()
export class UpstreamClientPool implements OnModuleDestroy {
  private readonly logger = new Logger(UpstreamClientPool.name);
  private readonly clients = new Map<string, PooledClient>();
  private readonly breakers = new Map<string, CircuitBreaker>();
  private readonly listChangedHandlers = new Set<ListChangedHandler>();

  onToolListChanged(handler: ListChangedHandler): void {
    this.listChangedHandlers.add(handler);
  }

  private breaker(id: string): CircuitBreaker {
    let b = this.breakers.get(id);
    if (!b) {
      b = new CircuitBreaker();
      this.breakers.set(id, b);
    }
    return b;
  }

  private clientFor(spec: UpstreamSpec): Promise<Client> {
    const pooled = this.clients.get(spec.id);
    if (pooled && pooled.version === spec.version) return pooled.client;
    if (pooled) void pooled.client.then((c) => c.close()).catch(() => undefined);

    const client = connectUpstream(spec, {
      onStderr: (line) => this.logger.debug(`[${spec.namespace}] ${line}`),
    }).then((c) => {
      c.onclose = () => {
        if (this.clients.get(spec.id)?.client === client) this.clients.delete(spec.id);
      };
      c.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        for (const h of this.listChangedHandlers) h(spec);
      });
      return c;
    });
    this.clients.set(spec.id, { version: spec.version, client });
    client.catch(() => {
      if (this.clients.get(spec.id)?.client === client) this.clients.delete(spec.id);
    });
    return client;
  }

  /** Calls a tool on the upstream. Transport and protocol failures become `UpstreamException`. */
  async callTool(spec: UpstreamSpec, name: string, args: Record<string, unknown> | undefined, signal?: AbortSignal): Promise<CallToolResult> {
    const breaker = this.breaker(spec.id);
    const blocked = breaker.blockedForMs();
    if (blocked > 0) {
      throw new UpstreamException(UpstreamExceptionCode.CircuitOpen, `upstream ${spec.namespace} is failing; calls are paused`, spec.id, blocked);
    }
    try {
      const client = await this.clientFor(spec);
      const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: spec.callTimeoutMs, signal })) as CallToolResult;
      breaker.recordSuccess();
      return result;
    } catch (err) {
      breaker.recordFailure();
      throw toUpstreamException(err, spec);
    }
  }

  /** Closes and forgets the pooled client of an upstream (its settings changed or it was deleted). */
  async evict(upstreamId: string): Promise<void> {
    const pooled = this.clients.get(upstreamId);
    this.clients.delete(upstreamId);
    this.breakers.delete(upstreamId);
    if (pooled) await pooled.client.then((c) => c.close()).catch(() => undefined);
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled([...this.clients.keys()].map((id) => this.evict(id)));
  }
}

function toUpstreamException(err: unknown, spec: UpstreamSpec): UpstreamException {
  if (err instanceof UpstreamException) return err;
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) {
      return new UpstreamException(UpstreamExceptionCode.Timeout, `upstream ${spec.namespace} did not answer within ${spec.callTimeoutMs} ms`, spec.id);
    }
    if (err.code === ErrorCode.ConnectionClosed) {
      return new UpstreamException(UpstreamExceptionCode.Unavailable, `upstream ${spec.namespace} closed the connection`, spec.id);
    }
    return new UpstreamException(UpstreamExceptionCode.ProtocolError, `upstream ${spec.namespace} answered with an error: ${err.message}`, spec.id);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new UpstreamException(UpstreamExceptionCode.Unavailable, `upstream ${spec.namespace} is unreachable: ${message}`, spec.id);
}
