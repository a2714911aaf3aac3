import type { ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { AnswerEventStore, KeyEventStore } from '@tollgate/answer-events';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Principal } from '@tollgate/identity';
import { sendJson } from '../endpoint/edge-auth';

/** How a request's SDK transport is made resumable, and how it is closed when its client goes. */
export interface ResumableAnswer {
  eventStore: KeyEventStore;
  retryInterval: number;
}

/**
 * Resumable answer streams (2025-11-25 Streamable HTTP, SEP-1699). A streamed answer starts with a
 * priming event (an event id, empty data, the `retry` of SSE_RETRY_MS) and every event is stored
 * in Redis (`AnswerEventStore`); a client whose connection broke sends `GET /mcp` with
 * `Last-Event-ID` to any edge and gets the events it missed, then the rest as the call (on
 * whichever edge runs it) stores them, until its answer.
 */
@Injectable()
export class AnswerStreamResumption {
  constructor(
    private readonly events: AnswerEventStore,
    @Inject(TOLLGATE_CONFIG) private readonly config: EdgeConfig,
  ) {}

  /** The event store and retry for one streamed request's transport. */
  resumable(principal: Principal): ResumableAnswer {
    return {
      eventStore: this.events.forKey(principal.orgId, principal.keyId),
      retryInterval: this.config.edge.sseRetryMs,
    };
  }

  /**
   * Closes a request's transport once its client is gone: at once, unless the client was given an
   * event id it can resume from. Then the call goes on (a disconnection is not a cancellation) and
   * its events are stored until it has answered, or for at most the call's deadline.
   */
  closeWhenAnswered(answer: ResumableAnswer | undefined, close: () => void): void {
    if (!answer?.eventStore.primed) return close();
    const deadline = setTimeout(close, this.config.edge.reservationTtlSeconds * 1000);
    deadline.unref();
    void answer.eventStore.answered.then(() => {
      clearTimeout(deadline);
      close();
    });
  }

  /** Answers `GET /mcp` with `Last-Event-ID`: the answer stream from after that event. */
  async resume(principal: Principal, lastEventId: string, res: ServerResponse, sessionId?: string): Promise<void> {
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    const events = await this.events.follow(principal.orgId, principal.keyId, lastEventId, gone.signal);
    if (!events) {
      return sendJson(res, 400, {
        jsonrpc: '2.0',
        error: {
          code: -32000,
          message: 'Unknown or expired Last-Event-ID: this answer stream cannot be resumed (send the request again)',
        },
        id: null,
      });
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      ...(sessionId ? { 'Mcp-Session-Id': sessionId } : {}),
    });
    res.flushHeaders();
    for await (const event of events) {
      if (res.destroyed) break;
      if (event === 'waiting') res.write(': keep-alive\n\n');
      else res.write(`event: message\nid: ${event.id}\ndata: ${JSON.stringify(event.message)}\n\n`);
    }
    res.end();
  }
}
