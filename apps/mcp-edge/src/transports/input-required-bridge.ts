import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { declares, requiredCapability, undeclaredCapability } from '@tollgate/mcp-client';
import { StatelessRevisionError } from './stateless-revision';

/** How long a call waits for its agent to come back with the inputs it asked for. */
export const HELD_CALL_TIMEOUT_MS = 5 * 60_000;
/** Requests an upstream sends together (a tool asking for several inputs at once) go out in one round. */
const GATHER_MS = 20;
/**
 * A 2025-11-25 upstream may name the input its mid-call request asks for in the request's `_meta`
 * (otherwise the edge numbers them); a client that already has that input can send it up front.
 */
export const INPUT_KEY_META = 'tollgate/inputKey';

type Answer = { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } };

interface PendingInput {
  method: string;
  params: Record<string, unknown> | undefined;
  resolve: (result: Record<string, unknown>) => void;
  reject: (err: Error) => void;
}

/** What a round of a held call ends with: the call's answer, or the inputs it still needs. */
export type Round =
  | { kind: 'done'; answer: Answer }
  | {
      kind: 'input_required';
      inputRequests: Record<string, { method: string; params?: Record<string, unknown> }>;
      requestState: string;
    };

/**
 * A 2026-07-28 `tools/call` whose upstream (of 2025-11-25) asks the client something mid-call:
 * the upstream's request is held here, the agent gets an input-required result naming it (with a
 * signed `requestState` that points at this call), and its retry with `inputResponses` answers
 * the upstream, which goes on. One governed call from the first round to the answer.
 */
export class HeldCall {
  readonly id = randomUUID();
  private readonly pending = new Map<string, PendingInput>();
  private answer?: Answer;
  private wake?: () => void;
  private inputs = 0;
  round = 0;
  /** Capabilities the upstream needed that the agent did not declare (refused to the upstream). */
  readonly refused: Record<string, Record<string, unknown>> = {};
  /** Where the call's notifications go: the POST of the round in progress. */
  notify: (message: object) => void = () => undefined;

  constructor(
    readonly keyId: string,
    private readonly clientCapabilities: Record<string, unknown>,
    private readonly abort: AbortController,
    /** Responses the agent sent with its first request: they answer the requests they name. */
    private readonly given: Record<string, Record<string, unknown>> = {},
  ) {}

  /**
   * The upstream asks the agent's client: held until the agent answers in a later round. `inputKey`
   * is the name a 2026-07-28 upstream gave it, kept for the agent.
   */
  ask(
    method: string,
    requestParams: Record<string, unknown> | undefined,
    signal: AbortSignal,
    inputKey?: string,
  ): Promise<Record<string, unknown>> {
    const required = requiredCapability({ method, params: requestParams });
    if (!required || !declares(this.clientCapabilities, required)) {
      Object.assign(this.refused, required ?? { [method]: {} });
      const capability = requestParams?.mode === 'url' ? 'elicitation (URL mode)' : undefined;
      return Promise.reject(undeclaredCapability(method, required ? capability : method));
    }
    const { key: namedInMeta, params } = withoutInputKey(requestParams);
    const named = inputKey ?? namedInMeta;
    const key = named && !this.pending.has(named) ? named : `input-${++this.inputs}`;
    const given = this.given[key];
    if (given) {
      delete this.given[key];
      return Promise.resolve(given);
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.pending.delete(key);
        reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(key, {
        method,
        params,
        resolve: (r) => (signal.removeEventListener('abort', onAbort), resolve(r)),
        reject: (e) => (signal.removeEventListener('abort', onAbort), reject(e)),
      });
      // Let requests sent together arrive before the round answers.
      setTimeout(() => this.wake?.(), GATHER_MS);
    });
  }

  finish(answer: Answer): void {
    this.answer = answer;
    this.wake?.();
  }

  /** Hands the agent's responses to the requests they answer; a response must be an object. */
  takeResponses(responses: Record<string, Record<string, unknown>>): void {
    for (const [key, response] of Object.entries(responses)) {
      const pending = this.pending.get(key);
      if (!pending) continue; // A response to nothing asked is ignored.
      this.pending.delete(key);
      pending.resolve(response);
    }
  }

  /** Waits until the call answers, or needs inputs the agent has not given. */
  async nextRound(sign: (call: HeldCall) => string): Promise<Round> {
    for (;;) {
      if (this.answer) return { kind: 'done', answer: this.answer };
      if (this.pending.size > 0) {
        this.round++;
        const inputRequests = Object.fromEntries(
          [...this.pending].map(([key, p]) => [key, { method: p.method, ...(p.params ? { params: p.params } : {}) }]),
        );
        return { kind: 'input_required', inputRequests, requestState: sign(this) };
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  /** The upstream refused the call for capabilities the agent did not declare: the agent gets -32021 naming them. */
  refuse(required: Record<string, Record<string, unknown>>): void {
    Object.assign(this.refused, required);
  }

  /** The agent did not come back in time: the call ends, cancelled (the upstream is told). */
  expire(): void {
    this.abort.abort('the agent did not answer the input-required result in time');
  }
}

/**
 * The held calls of this edge, by id; `requestState` is signed so an agent cannot point at another's.
 * The key is the deployment's (EdgeConfig.edge.requestStateKey), the same on every edge: a retry
 * that reaches another edge passes the check there and is told the call waits elsewhere.
 */
export class HeldCalls {
  private readonly calls = new Map<string, HeldCall>();

  constructor(private readonly key: Buffer) {}

  hold(call: HeldCall): () => void {
    this.calls.set(call.id, call);
    const timer = setTimeout(() => call.expire(), HELD_CALL_TIMEOUT_MS);
    return () => {
      clearTimeout(timer);
      this.calls.delete(call.id);
    };
  }

  sign(call: HeldCall): string {
    const payload = `${call.id}.${call.round}`;
    return `${payload}.${this.mac(call.keyId, payload)}`;
  }

  /** The call a `requestState` names, for this key and its current round; a refusal otherwise. */
  resume(keyId: string, state: unknown): HeldCall {
    const parts = typeof state === 'string' ? state.split('.') : [];
    const [id, round, mac] = parts;
    const expected = id && round ? Buffer.from(this.mac(keyId, `${id}.${round}`), 'base64url') : undefined;
    const given = parts.length === 3 ? Buffer.from(mac, 'base64url') : undefined;
    if (!expected || !given || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new StatelessRevisionError(200, ErrorCode.InvalidParams, 'requestState failed its integrity check');
    }
    const call = this.calls.get(id);
    if (!call || String(call.round) !== round) {
      throw new StatelessRevisionError(
        200,
        ErrorCode.InvalidParams,
        'requestState names no call waiting for input on this edge (it ended, expired, or waits on another edge): call the tool again without it',
      );
    }
    return call;
  }

  private mac(keyId: string, payload: string): string {
    return createHmac('sha256', this.key).update(`${keyId}|${payload}`).digest('base64url');
  }
}

function withoutInputKey(params: Record<string, unknown> | undefined): {
  key?: string;
  params: Record<string, unknown> | undefined;
} {
  const meta = params?._meta as Record<string, unknown> | undefined;
  const key = meta?.[INPUT_KEY_META];
  if (typeof key !== 'string' || !params) return { params };
  const { [INPUT_KEY_META]: _named, ...rest } = meta!;
  const { _meta: _ignored, ...others } = params;
  return { key, params: Object.keys(rest).length > 0 ? { ...others, _meta: rest } : others };
}

/** `inputResponses` as this revision has them: an object whose every entry is an object. */
export function inputResponsesOf(params: Record<string, unknown>): Record<string, Record<string, unknown>> | undefined {
  if (!('inputResponses' in params)) return undefined;
  const raw = params.inputResponses;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new StatelessRevisionError(200, ErrorCode.InvalidParams, 'inputResponses must be an object');
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new StatelessRevisionError(200, ErrorCode.InvalidParams, `inputResponses.${key} must be an object`);
  }
  return raw as Record<string, Record<string, unknown>>;
}
