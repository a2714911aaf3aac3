import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ShutdownDrain } from '@tollgate/observability';
import { RedisService } from '@tollgate/redis';
import type { ServerResponse } from 'node:http';
import { LIST_CHANGED_METHODS, ListKind } from './list-changed';

const SESSION_NOTIFY_CHANNEL = 'mcp-session-notify';
// `<sessionId> <notification JSON>`: any other notification for one session's stream.
const SESSION_MESSAGE_CHANNEL = 'mcp-session-message';
const KEEP_ALIVE_MS = 25_000;
// SSE: a comment saying why, and `retry` so the client reconnects (through the load balancer, to
// another replica) after half a second; the session lives in Redis, so any replica serves it.
const RECONNECT_ELSEWHERE = ': this replica is shutting down; reconnect\nretry: 500\n\n';

interface Stream {
  res: ServerResponse;
  keepAlive: NodeJS.Timeout;
}

/**
 * The server-to-client side of sessions: each replica holds the GET streams opened to it, and
 * any replica can notify any session through Redis pub/sub. A session's tool list changes when
 * its agent loads tools; of its org's catalog and policy changes it hears those that change what it
 * sees (VisibleListWatch decides, per stream).
 */
@Injectable()
export class SessionHub implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(SessionHub.name);
  private readonly streams = new Map<string, Set<Stream>>();
  /** 2026-07-28 listen streams held here, by subscriber id: each writes a message its own way. */
  private readonly listeners = new Map<string, (message: Record<string, unknown>) => void>();

  private draining = false;
  private readonly sessionToolListeners: ((sessionId: string) => void)[] = [];

  constructor(
    private readonly redis: RedisService,
    drain: ShutdownDrain,
  ) {
    // Draining: every stream is told to come back (to another replica) and ended, so none holds the exit.
    drain.onDrain(() => {
      this.draining = true;
      this.endAll();
    });
  }

  async onModuleInit(): Promise<void> {
    await this.redis.subscribe(SESSION_NOTIFY_CHANNEL, (sessionId) => {
      this.sendToolListChanged(this.streams.get(sessionId));
      for (const listener of this.sessionToolListeners) listener(sessionId);
    });
    await this.redis.subscribe(SESSION_MESSAGE_CHANNEL, (message) => {
      const space = message.indexOf(' ');
      if (space <= 0) return;
      const id = message.slice(0, space);
      const parsed = JSON.parse(message.slice(space + 1)) as Record<string, unknown>;
      this.send(this.streams.get(id), parsed);
      this.listeners.get(id)?.(parsed);
    });
  }

  /** Holds `res` open as the session's SSE stream until the client goes away. */
  attachStream(sessionId: string, res: ServerResponse): void {
    if (this.draining) {
      res.writeHead(200, {
        'Content-Type': 'text/event-stream',
        'Cache-Control': 'no-cache',
        'Mcp-Session-Id': sessionId,
      });
      res.end(RECONNECT_ELSEWHERE);
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'Mcp-Session-Id': sessionId,
    });
    res.write(': connected\n\n');
    const stream: Stream = { res, keepAlive: setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS) };
    let set = this.streams.get(sessionId);
    if (!set) {
      set = new Set();
      this.streams.set(sessionId, set);
    }
    set.add(stream);
    res.on('close', () => {
      clearInterval(stream.keepAlive);
      set.delete(stream);
      if (set.size === 0) this.streams.delete(sessionId);
    });
  }

  /**
   * Hands `deliver` what is sent to `subscriberId` (notifySession) until the returned function is
   * called: how a 2026-07-28 listen stream held by this replica hears of its resources' updates.
   */
  attachListener(subscriberId: string, deliver: (message: Record<string, unknown>) => void): () => void {
    this.listeners.set(subscriberId, deliver);
    return () => this.listeners.delete(subscriberId);
  }

  /** Calls `listener` with the session id whenever a session's own tool list changed (it loaded tools). */
  onSessionToolListChanged(listener: (sessionId: string) => void): void {
    this.sessionToolListeners.push(listener);
  }

  /** Tells the session, wherever its stream is held, that its tool list changed. */
  async notifyToolListChanged(sessionId: string): Promise<void> {
    await this.redis.publish(SESSION_NOTIFY_CHANNEL, sessionId);
  }

  /**
   * Sends a notification (`notifications/resources/updated`...) to the session or listen stream
   * `sessionId` names, wherever its stream is held.
   */
  async notifySession(
    sessionId: string,
    notification: { method: string; params?: Record<string, unknown> },
  ): Promise<void> {
    await this.redis.publish(
      SESSION_MESSAGE_CHANNEL,
      `${sessionId} ${JSON.stringify({ jsonrpc: '2.0', ...notification })}`,
    );
  }

  /** Tells the client on stream `res` (held by this replica) that these lists changed. */
  sendListsChanged(res: ServerResponse, kinds: ListKind[]): void {
    if (res.writableEnded) return;
    for (const kind of kinds) this.send([{ res }], { jsonrpc: '2.0', method: LIST_CHANGED_METHODS[kind] });
  }

  private sendToolListChanged(streams: Set<Stream> | undefined): void {
    this.send(streams, { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  }

  private send(streams: Iterable<Pick<Stream, 'res'>> | undefined, message: object): void {
    const event = `event: message\ndata: ${JSON.stringify(message)}\n\n`;
    for (const s of streams ?? []) {
      try {
        s.res.write(event);
      } catch (err) {
        this.logger.warn(`could not notify a session stream: ${(err as Error).message}`);
      }
    }
  }

  onApplicationShutdown(): void {
    this.endAll();
  }

  private endAll(): void {
    for (const set of this.streams.values())
      for (const s of set) {
        clearInterval(s.keepAlive);
        s.res.end(RECONNECT_ELSEWHERE);
      }
    this.streams.clear();
  }
}
