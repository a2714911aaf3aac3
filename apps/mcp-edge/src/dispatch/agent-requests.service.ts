import { Injectable, OnModuleInit } from '@nestjs/common';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { Principal } from '@tollgate/identity';
import { RedisService } from '@tollgate/redis';
import { ClientRequestError } from '@tollgate/mcp-client';
import { randomUUID } from 'node:crypto';

/** Edges hand each other the agent's answers to requests they sent. */
const AGENT_ANSWER_CHANNEL = 'agent-answer';

type Answer = { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } };

interface Pending {
  resolve: (result: Record<string, unknown>) => void;
  reject: (err: Error) => void;
}

/**
 * Requests the edge sends to an agent's client on a call's answer stream (relayed from an
 * upstream: sampling, elicitation, roots). The client answers in a POST of its own, which may land
 * on any replica: the answer is matched by key, session and request id (the id is ours, unique
 * across edges) and handed over Redis to the edge that waits for it.
 */
@Injectable()
export class AgentRequests implements OnModuleInit {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly redis: RedisService) {}

  async onModuleInit(): Promise<void> {
    await this.redis.subscribe(AGENT_ANSWER_CHANNEL, (message) => {
      const { key, answer } = JSON.parse(message) as { key: string; answer: Answer };
      this.settle(key, answer);
    });
  }

  /** Sends `method` to the agent on the stream of its request `relatedRequestId`; resolves with its answer. */
  ask(
    transport: Transport,
    principal: Principal,
    sessionId: string | undefined,
    relatedRequestId: RequestId,
    method: string,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    signal.throwIfAborted();
    const id = `tollgate-${randomUUID()}`;
    const key = answerKey(principal, sessionId, id);
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const onAbort = () => {
        this.pending.delete(key);
        reject(
          new ClientRequestError(ErrorCode.RequestTimeout, `the agent did not answer ${method} before the call ended`),
        );
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const done = () => signal.removeEventListener('abort', onAbort);
      this.pending.set(key, {
        resolve: (r) => (done(), resolve(r)),
        reject: (e) => (done(), reject(e)),
      });
      transport
        .send({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) }, { relatedRequestId })
        .catch((err: Error) => {
          this.pending.delete(key);
          done();
          reject(err);
        });
    });
  }

  /**
   * Takes the agent's answers (JSON-RPC responses, alone or in a batch); true when `body` was only
   * answers. An answer to no request of this key and session is dropped, as the SDK does.
   */
  async deliver(principal: Principal, sessionId: string | undefined, body: unknown): Promise<boolean> {
    if (!onlyAgentAnswers(body)) return false;
    for (const m of (Array.isArray(body) ? body : [body]) as AgentAnswer[]) {
      const key = answerKey(principal, sessionId, String(m.id));
      const answer: Answer =
        'result' in m
          ? { result: m.result as Record<string, unknown> }
          : { error: m.error as { code: number; message: string } };
      if (this.pending.has(key)) this.settle(key, answer);
      else await this.redis.publish(AGENT_ANSWER_CHANNEL, JSON.stringify({ key, answer }));
    }
    return true;
  }

  private settle(key: string, answer: Answer): void {
    const pending = this.pending.get(key);
    if (!pending) return;
    this.pending.delete(key);
    if ('result' in answer) pending.resolve(answer.result ?? {});
    else pending.reject(new ClientRequestError(answer.error.code, answer.error.message, answer.error.data));
  }
}

/** Whether `body` is only the agent's answers (JSON-RPC responses, alone or in a batch), which deliver takes. */
export function onlyAgentAnswers(body: unknown): boolean {
  return Array.isArray(body) ? body.length > 0 && body.every(isResponse) : isResponse(body);
}

/** A JSON-RPC response from the agent. */
type AgentAnswer = { id: string | number; result?: unknown; error?: unknown };

function isResponse(m: unknown): m is AgentAnswer {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return false;
  const r = m as Record<string, unknown>;
  return (
    r.jsonrpc === '2.0' &&
    r.method === undefined &&
    (typeof r.id === 'string' || typeof r.id === 'number') &&
    ('result' in r || 'error' in r)
  );
}

// Only the key (and session) that was asked can answer.
function answerKey(principal: Principal, sessionId: string | undefined, id: string): string {
  return `${principal.keyId}|${sessionId ?? ''}|${id}`;
}
