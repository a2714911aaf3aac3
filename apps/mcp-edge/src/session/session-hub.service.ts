import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ORG_CONFIG_CHANGED_CHANNEL, RedisService } from '@tollgate/redis';
import type { ServerResponse } from 'node:http';

const SESSION_NOTIFY_CHANNEL = 'mcp-session-notify';
// `<sessionId> <notification JSON>`: any other notification for one session's stream.
const SESSION_MESSAGE_CHANNEL = 'mcp-session-message';
// An org's catalog or policies changed: its tools, resources and prompts may all have.
const LIST_CHANGED = [
  'notifications/tools/list_changed',
  'notifications/resources/list_changed',
  'notifications/prompts/list_changed',
];
const KEEP_ALIVE_MS = 25_000;

interface Stream {
  orgId: string;
  res: ServerResponse;
  keepAlive: NodeJS.Timeout;
}

/**
 * The server-to-client side of sessions: each replica holds the GET streams opened to it, and
 * any replica can notify any session through Redis pub/sub. A session's tool list changes when
 * its agent loads tools, and every session of an org hears of catalog and policy changes.
 */
@Injectable()
export class SessionHub implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(SessionHub.name);
  private readonly streams = new Map<string, Set<Stream>>();

  constructor(private readonly redis: RedisService) {}

  async onModuleInit(): Promise<void> {
    await this.redis.subscribe(SESSION_NOTIFY_CHANNEL, (sessionId) =>
      this.sendToolListChanged(this.streams.get(sessionId)),
    );
    await this.redis.subscribe(ORG_CONFIG_CHANGED_CHANNEL, (orgId) => {
      for (const set of this.streams.values()) {
        const ofOrg = new Set([...set].filter((s) => s.orgId === orgId));
        for (const method of LIST_CHANGED) this.send(ofOrg, { jsonrpc: '2.0', method });
      }
    });
    await this.redis.subscribe(SESSION_MESSAGE_CHANNEL, (message) => {
      const space = message.indexOf(' ');
      if (space > 0)
        this.send(this.streams.get(message.slice(0, space)), JSON.parse(message.slice(space + 1)) as object);
    });
  }

  /** Holds `res` open as the session's SSE stream until the client goes away. */
  attachStream(sessionId: string, orgId: string, res: ServerResponse): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'Mcp-Session-Id': sessionId,
    });
    res.write(': connected\n\n');
    const stream: Stream = { orgId, res, keepAlive: setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS) };
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

  /** Tells the session, wherever its stream is held, that its tool list changed. */
  async notifyToolListChanged(sessionId: string): Promise<void> {
    await this.redis.publish(SESSION_NOTIFY_CHANNEL, sessionId);
  }

  /** Sends a notification (`notifications/resources/updated`...) to the session, wherever its stream is held. */
  async notifySession(
    sessionId: string,
    notification: { method: string; params?: Record<string, unknown> },
  ): Promise<void> {
    await this.redis.publish(
      SESSION_MESSAGE_CHANNEL,
      `${sessionId} ${JSON.stringify({ jsonrpc: '2.0', ...notification })}`,
    );
  }

  private sendToolListChanged(streams: Set<Stream> | undefined): void {
    this.send(streams, { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  }

  private send(streams: Set<Stream> | undefined, message: object): void {
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
    for (const set of this.streams.values()) for (const s of set) s.res.end();
    this.streams.clear();
  }
}
