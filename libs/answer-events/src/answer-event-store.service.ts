import { Injectable } from '@nestjs/common';
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { duplicateRedisClient, RedisClient, RedisService } from '@tollgate/redis';

/** How long an answer stream's events are kept after its last one: a client reconnects within this. */
export const ANSWER_EVENTS_KEPT_MS = 10 * 60_000;
/** The most events kept per answer stream (progress, log messages, requests to the client, the answer). */
const MAX_EVENTS_PER_STREAM = 1000;
/** How long one blocking read waits before the follower looks whether the stream still exists. */
const FOLLOW_BLOCK_MS = 10_000;

/** One stored event of an answer stream, as the client gets it again. */
export interface AnswerEvent {
  id: EventId;
  message: JSONRPCMessage;
}

/**
 * The event store of one answer stream's transport (SDK `EventStore`), bound to the key that made
 * the request, with what the edge needs to know about it: whether the client got a priming event
 * (so it can resume) and when the answer was stored.
 */
export interface KeyEventStore extends EventStore {
  /** The client holds an event id of this stream (the priming event was stored). */
  readonly primed: boolean;
  /** Settles once a response (result or error) has been stored. */
  readonly answered: Promise<void>;
}

/**
 * The events of 2025-11-25 Streamable HTTP answer streams (SSE), kept in Redis so a client whose
 * connection broke resumes with `Last-Event-ID` on any edge (SEP-1699): one Redis stream per
 * answer stream under its organisation's shard tag (one cluster slot), trimmed to
 * MAX_EVENTS_PER_STREAM and expiring ANSWER_EVENTS_KEPT_MS after its last event. Each entry names
 * the key that made the request: only that key may resume it.
 * An event id is `<stream id>:<Redis entry id>`; the organisation comes from the resuming key.
 */
@Injectable()
export class AnswerEventStore {
  constructor(private readonly redis: RedisService) {}

  private streamKey(orgId: string, streamId: string): string {
    return this.redis.orgKey(orgId, 'sse', streamId);
  }

  /** The SDK event store of one request's answer stream, made by the key `keyId` of `orgId`. */
  forKey(orgId: string, keyId: string): KeyEventStore {
    let markAnswered!: () => void;
    const answered = new Promise<void>((resolve) => (markAnswered = resolve));
    const state = { primed: false };
    return {
      get primed() {
        return state.primed;
      },
      answered,
      storeEvent: async (streamId: StreamId, message: JSONRPCMessage): Promise<EventId> => {
        const id = await this.append(orgId, keyId, streamId, message);
        if (!('method' in message) && !('id' in message)) state.primed = true;
        if (isAnswer(message)) markAnswered();
        return id;
      },
      // Resumption is served by `follow` (it waits on Redis for what another edge stores), not
      // by the SDK transport, which only replays what its own process holds.
      replayEventsAfter: async () => {
        throw new Error('answer streams are resumed with AnswerEventStore.follow');
      },
    };
  }

  private async append(orgId: string, keyId: string, streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const key = this.streamKey(orgId, streamId);
    const replies = await this.redis.client
      .multi()
      .xadd(key, 'MAXLEN', '~', MAX_EVENTS_PER_STREAM, '*', 'k', keyId, 'm', JSON.stringify(message))
      .pexpire(key, ANSWER_EVENTS_KEPT_MS)
      .exec();
    const [err, entryId] = replies?.[0] ?? [new Error('answer event not stored'), null];
    if (err) throw err;
    return `${streamId}:${String(entryId)}`;
  }

  /**
   * The events of the answer stream after `lastEventId`, as they are stored (on any edge), until
   * the answer (a result or error) has been given, the stream expired, or `signal` aborts.
   * Null when the id names no stream this key may resume (unknown, expired, another key's).
   */
  async follow(
    orgId: string,
    keyId: string,
    lastEventId: string,
    signal: AbortSignal,
  ): Promise<AsyncIterable<AnswerEvent | 'waiting'> | null> {
    const cursor = parseEventId(lastEventId);
    if (!cursor) return null;
    const key = this.streamKey(orgId, cursor.streamId);
    const first = await this.redis.client.xrange(key, '-', '+', 'COUNT', 1);
    if (first.length === 0 || fieldOf(first[0][1], 'k') !== keyId) return null;
    return this.eventsAfter(key, cursor.streamId, cursor.entryId, signal);
  }

  private async *eventsAfter(
    key: string,
    streamId: string,
    after: string,
    signal: AbortSignal,
  ): AsyncGenerator<AnswerEvent | 'waiting'> {
    let last = after;
    const stored = await this.redis.client.xrange(key, `(${after}`, '+');
    for (const [entryId, fields] of stored) {
      last = entryId;
      const event = eventOf(streamId, entryId, fields);
      if (!event) continue;
      yield event;
      if (isAnswer(event.message)) return;
    }
    // The call still runs (here or on another edge): wait for what it stores next. A blocking
    // read holds its connection, so it gets one of its own, closed when the follower stops.
    const blocking: RedisClient = duplicateRedisClient(this.redis.client, { maxRetriesPerRequest: 1 });
    const stop = () => blocking.disconnect();
    signal.addEventListener('abort', stop, { once: true });
    try {
      while (!signal.aborted) {
        const read = (await blocking.xread('BLOCK', FOLLOW_BLOCK_MS, 'STREAMS', key, last)) as
          [string, [string, string[]][]][] | null;
        if (!read) {
          if ((await this.redis.client.exists(key)) === 0) return;
          yield 'waiting';
          continue;
        }
        for (const [entryId, fields] of read[0][1]) {
          last = entryId;
          const event = eventOf(streamId, entryId, fields);
          if (!event) continue;
          yield event;
          if (isAnswer(event.message)) return;
        }
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    } finally {
      signal.removeEventListener('abort', stop);
      blocking.disconnect();
    }
  }
}

/** A response to the client's request: the last event of its answer stream. */
function isAnswer(message: JSONRPCMessage): boolean {
  return 'id' in message && ('result' in message || 'error' in message);
}

/** `<stream id>:<entry id>` (entry ids are `<ms>-<seq>`), or null for anything else. */
export function parseEventId(eventId: string): { streamId: string; entryId: string } | null {
  const match = /^([0-9a-f-]{36}):(\d{1,20}-\d{1,20})$/.exec(eventId);
  return match ? { streamId: match[1], entryId: match[2] } : null;
}

function fieldOf(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** The event a stored entry replays; none for the priming event (empty data, already given). */
function eventOf(streamId: string, entryId: string, fields: string[]): AnswerEvent | null {
  const raw = fieldOf(fields, 'm');
  if (raw === undefined) return null;
  const message = JSON.parse(raw) as JSONRPCMessage;
  if (!('method' in message) && !('id' in message)) return null;
  return { id: `${streamId}:${entryId}`, message };
}
