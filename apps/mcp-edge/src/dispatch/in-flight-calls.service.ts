import { Injectable, OnModuleInit } from '@nestjs/common';
import { Principal } from '@tollgate/identity';
import { RedisService } from '@tollgate/redis';

/** Edges tell each other of a cancellation for a call they do not run themselves. */
export const CALL_CANCELLED_CHANNEL = 'call-cancelled';

/**
 * The agents' `tools/call` requests in flight on this edge, by key, session and request id, so a
 * `notifications/cancelled` (which arrives as its own POST, on any replica) aborts the call it
 * names: the upstream is cancelled too and the call is charged as a failed one.
 */
@Injectable()
export class InFlightCalls implements OnModuleInit {
  private readonly calls = new Map<string, AbortController>();

  constructor(private readonly redis: RedisService) {}

  async onModuleInit(): Promise<void> {
    await this.redis.subscribe(CALL_CANCELLED_CHANNEL, (message) => {
      const { call, reason } = JSON.parse(message) as { call: string; reason?: string };
      this.calls.get(call)?.abort(reason ?? 'cancelled by the agent');
    });
  }

  /** Lets a cancellation of `requestId` abort `controller` until the returned function is called. */
  track(
    principal: Principal,
    sessionId: string | undefined,
    requestId: string | number,
    controller: AbortController,
  ): () => void {
    const call = callKey(principal, sessionId, requestId);
    this.calls.set(call, controller);
    return () => {
      if (this.calls.get(call) === controller) this.calls.delete(call);
    };
  }

  /** The agent cancelled `requestId`: abort it here, or on the edge that runs it. */
  async cancel(
    principal: Principal,
    sessionId: string | undefined,
    requestId: string | number,
    reason: string | undefined,
  ): Promise<void> {
    const call = callKey(principal, sessionId, requestId);
    const local = this.calls.get(call);
    if (local) return local.abort(reason ?? 'cancelled by the agent');
    await this.redis.publish(CALL_CANCELLED_CHANNEL, JSON.stringify({ call, reason }));
  }
}

// Request ids are the client's own: scoped by key and session, and typed (1 and "1" differ).
function callKey(principal: Principal, sessionId: string | undefined, requestId: string | number): string {
  return `${principal.keyId}|${sessionId ?? ''}|${typeof requestId}:${requestId}`;
}
