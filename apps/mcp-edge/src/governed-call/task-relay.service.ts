import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import {
  CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  RELATED_TASK_META_KEY,
  ResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { ToolCatalogService } from '@tollgate/upstream-registry';
import type { AdmissionClock } from '@tollgate/admission';
import { CLOCK } from '@tollgate/kernel';
import { Principal } from '@tollgate/identity';
import {
  DueTask,
  TASKS_EXTENSION,
  TERMINAL_TASK_STATUSES,
  TaskRecord,
  fromSessionTask,
  toSessionTask,
  TaskStore,
  parseWithBigInts,
} from '@tollgate/tasks';
import { UpstreamCallRelay, currentCallRelay, runWithCallRelay, unrelayableRequest } from '@tollgate/mcp-client';
import { TaskEnding, TaskSettled, TaskSettler } from './task-settler.service';
import { UpstreamCaller } from './upstream-caller.service';
import { TaskInputHold } from './task-input-hold.service';
import { SessionHub } from '../session/session-hub.service';

/** How long one edge holds a task's settlement (an edge that dies holding it lets another retry then). */
const SETTLEMENT_CLAIM_MS = 60_000;
/** How often each edge looks for tasks whose expiry came, and how many it takes at a time. */
const EXPIRY_SWEEP_MS = 1_000;
const EXPIRY_BATCH = 20;
/** How often a 2025-11-25 `tasks/result` asks the upstream, when the task sets no poll interval. */
const SESSION_RESULT_POLL_MS = 500;
/** Tasks per `tasks/list` page (each open one is asked of its upstream). */
const TASK_LIST_PAGE = 20;

export type TaskAnswer =
  { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } };

type Detailed = Record<string, unknown> & { status?: string };
/** One of a DetailedTask's inlined `inputRequests` (an elicitation, a sampling request, a roots list). */
type InputRequest = { method?: unknown; params?: Record<string, unknown> & { _meta?: Record<string, unknown> } };

/**
 * The tasks extension through the edge, after a task-augmented call was admitted and reserved
 * (TaskOpening.open): `tasks/get`, `tasks/update` and `tasks/cancel` of the key that
 * made the task, relayed to its upstream on any edge (the task is in Redis, TaskStore); free, no
 * usage event of their own. The first edge that sees the task end (completed, failed, cancelled)
 * settles and meters it, once; a task that outlives its ttl is cancelled upstream and settled as a
 * failed call by whichever edge claims its expiry first.
 */
@Injectable()
export class TaskRelay implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(TaskRelay.name);
  private stopSweep: (() => void) | null = null;
  /** The sweep running on this edge, and the one asked for meanwhile (at most one waits). */
  private sweeping: Promise<void> | null = null;
  private sweepNext: Promise<void> | null = null;

  constructor(
    private readonly store: TaskStore,
    private readonly settler: TaskSettler,
    private readonly upstreams: UpstreamCaller,
    private readonly catalog: ToolCatalogService,
    private readonly hub: SessionHub,
    private readonly inputs: TaskInputHold,
    // The edge's clock (EdgeModule gives ConfigModule its AdmissionClock): a task's expiry is on
    // it, and the sweep runs on it (a test moves it, TestClock.elapse, instead of waiting).
    @Inject(CLOCK) private readonly clock: AdmissionClock,
  ) {}

  /** One `tasks/get`, `tasks/update` or `tasks/cancel` of a client that declared the extension. */
  async answer(
    principal: Principal,
    method: string,
    params: Record<string, unknown>,
    clientCapabilities: Record<string, unknown>,
  ): Promise<TaskAnswer> {
    const taskId = params.taskId;
    if (typeof taskId !== 'string') return invalid('params.taskId must be a string');
    const record = await this.store.find(principal.orgId, principal.keyId, taskId);
    if (!record) return invalid(`Unknown task: ${taskId}`);
    if (record.state === 'expired') return expiredError(record);
    switch (method) {
      case 'tasks/get':
        return { result: await this.detailed(principal, record, clientCapabilities) };
      case 'tasks/update': {
        if (record.state !== 'open') return { result: {} };
        const responses = params.inputResponses ?? {};
        if (typeof responses !== 'object' || responses === null || Array.isArray(responses))
          return invalid('params.inputResponses must be an object');
        return this.update(principal, record, responses as Record<string, unknown>, clientCapabilities);
      }
      default: {
        // Cancelling an ended task is acknowledged like any other (idempotent).
        if (record.state !== 'open') return { result: {} };
        await this.ask(principal, record, 'tasks/cancel', clientCapabilities);
        // It may have ended before the cancel reached it: settled as it ended, else as cancelled.
        const after = await this.poll(principal, record, clientCapabilities);
        const ended = 'result' in after && TERMINAL_TASK_STATUSES.has(String(after.result.status));
        await this.settle(record, ended ? endingOf(after.result as Detailed) : { status: 'cancelled' });
        return { result: {} };
      }
    }
  }

  /** A DetailedTask under the edge's task id: settled ones from the record, open ones from the upstream. */
  private async detailed(
    principal: Principal,
    record: TaskRecord,
    clientCapabilities: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    if (record.state === 'settled' && record.final) return this.envelope(record, JSON.parse(record.final));
    const asked = await this.poll(principal, record, clientCapabilities);
    // The upstream cannot say: the task is still the edge's, reported as working until it can.
    if ('error' in asked) return this.envelope(record, { status: 'working', statusMessage: asked.error.message });
    const upstream = asked.result as Detailed;
    if (TERMINAL_TASK_STATUSES.has(String(upstream.status))) {
      const final = await this.settle(record, endingOf(upstream), upstream);
      // Another edge is settling it right now: it reads as working until that is done.
      return this.envelope(record, final ?? { status: 'working', lastUpdatedAt: upstream.lastUpdatedAt });
    }
    const { status, statusMessage, lastUpdatedAt, inputRequests } = upstream;
    return this.envelope(record, {
      status,
      ...(statusMessage !== undefined ? { statusMessage } : {}),
      ...(lastUpdatedAt !== undefined ? { lastUpdatedAt } : {}),
      ...(status === 'input_required' && inputRequests !== undefined ? { inputRequests } : {}),
    });
  }

  private envelope(record: TaskRecord, fields: Record<string, unknown>): Record<string, unknown> {
    return {
      taskId: record.taskId,
      createdAt: record.createdAt,
      lastUpdatedAt: record.createdAt,
      ttlMs: record.ttlMs,
      ...(record.pollIntervalMs !== undefined ? { pollIntervalMs: record.pollIntervalMs } : {}),
      ...fields,
    };
  }

  /**
   * Settles a task that ended, once across every edge: the first to claim it settles and meters
   * it (TaskSettler.settle) and records what later polls answer. Null when another
   * edge holds the claim.
   */
  private async settle(
    record: TaskRecord,
    ending: TaskEnding,
    upstream?: Detailed,
  ): Promise<Record<string, unknown> | null> {
    const claim = await this.store.claimSettlement(record.orgId, record.taskId, SETTLEMENT_CLAIM_MS);
    if (!claim) {
      const now = await this.store.read(record.orgId, record.taskId);
      return now?.final ? (JSON.parse(now.final) as Record<string, unknown>) : null;
    }
    let settled: TaskSettled;
    try {
      settled = await this.settler.settle(record.settlement, ending, claim.retaken);
    } catch (err) {
      await this.store.releaseClaim(record.orgId, record.taskId);
      throw err;
    }
    const lastUpdatedAt =
      typeof upstream?.lastUpdatedAt === 'string' ? upstream.lastUpdatedAt : new Date(this.clock.now()).toISOString();
    const final: Record<string, unknown> =
      ending.status === 'completed'
        ? { status: 'completed', lastUpdatedAt, result: settled.result }
        : ending.status === 'failed'
          ? { status: 'failed', lastUpdatedAt, error: upstream?.error ?? failedError(), _meta: settled.meta }
          : { status: 'cancelled', lastUpdatedAt, _meta: settled.meta };
    await this.store.settled(record.orgId, record.taskId, ending.status === 'expired' ? 'expired' : 'settled', final);
    // What it still asked of the client is dropped, on the edge holding it too.
    await this.inputs
      .taskEnded(record)
      .catch((err: Error) => this.logger.warn(`task ${record.taskId}: input requests not dropped: ${err.message}`));
    // The 2025-11-25 session that made it hears that it ended, on its stream, wherever that is held.
    if (record.sessionId)
      await this.hub
        .notifySession(record.sessionId, {
          method: 'notifications/tasks/status',
          params: toSessionTask(this.envelope(record, final)),
        })
        .catch((err: Error) => this.logger.warn(`task ${record.taskId}: status not sent: ${err.message}`));
    return final;
  }

  /**
   * The upstream's `tasks/get`, in the extension's shape whichever revision the upstream speaks: a
   * 2025-11-25 Task (`ttl`, nothing inlined) is renamed, and a completed one's result is fetched
   * with `tasks/result` (which answers at once, the task having ended).
   */
  private async poll(
    principal: Principal,
    record: TaskRecord,
    clientCapabilities: Record<string, unknown>,
  ): Promise<TaskAnswer> {
    const asked = await this.ask(principal, record, 'tasks/get', clientCapabilities);
    if (!('result' in asked) || !('ttl' in asked.result) || 'ttlMs' in asked.result) return asked;
    const task = fromSessionTask(asked.result);
    // Its requests come on the creating edge's tasks/result, held there and kept on the task (TaskInputHold).
    if (task.status === 'input_required' && record.heldBy)
      return { result: { ...task, inputRequests: await this.inputs.pending(record) } };
    if (task.status !== 'completed') return { result: task };
    const payload = await this.ask(principal, record, 'tasks/result', clientCapabilities);
    return {
      result:
        'result' in payload ? { ...task, result: payload.result } : { ...task, status: 'failed', error: payload.error },
    };
  }

  /**
   * One `tasks/get`, `tasks/result` or `tasks/cancel` of a 2025-11-25 agent (SESSION_TASK_METHODS):
   * the same task, store and settlement as the extension's, answered in that revision's shapes.
   * `tasks/result` waits until the task ends (the revision's rule), polling its upstream meanwhile.
   */
  async answerSession(
    principal: Principal,
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<TaskAnswer> {
    const caps = { extensions: { [TASKS_EXTENSION]: {} } };
    const taskId = params.taskId;
    if (typeof taskId !== 'string') return invalid('params.taskId must be a string');
    // The input requests this tasks/result has relayed to the agent (each is asked once).
    const asked = new Set<string>();
    for (;;) {
      const record = await this.store.find(principal.orgId, principal.keyId, taskId);
      if (!record) return invalid(`Unknown task: ${taskId}`);
      if (record.state === 'expired') return expiredError(record);
      if (method === 'tasks/cancel') {
        const cancelled = await this.answer(principal, 'tasks/cancel', params, caps);
        if ('error' in cancelled) return cancelled;
        method = 'tasks/get';
        continue;
      }
      const task = await this.detailed(principal, record, caps);
      if (method === 'tasks/get') return { result: toSessionTask(task) };
      if (TERMINAL_TASK_STATUSES.has(String(task.status))) {
        // An expiry settled meanwhile (its final reads cancelled): answered as the expiry it was.
        const now =
          task.status === 'completed' ? null : await this.store.find(principal.orgId, principal.keyId, taskId);
        return now?.state === 'expired' ? expiredError(now) : sessionPayload(task);
      }
      if (task.status === 'input_required') {
        const relayed = await this.relayInputRequests(principal, record, task, asked, signal);
        if (relayed === 'answered') continue;
        if (relayed !== 'none') return relayed;
      }
      // Not ended yet: asked again after the task's poll interval, until it ends or the agent goes.
      await waitFor(record.pollIntervalMs ?? SESSION_RESULT_POLL_MS, signal);
      if (signal.aborted) return { error: { code: ErrorCode.RequestTimeout, message: 'The request was cancelled' } };
    }
  }

  /**
   * A task of a 2026-07-28 upstream waiting for input (its requests inlined in `tasks/get`) for a
   * 2025-11-25 agent, which gets them the way its revision has it: as requests on the stream of its
   * `tasks/result` (the call's relay, which asks only what the session's client declared), each
   * tied to the edge's task id (`io.modelcontextprotocol/related-task`); their answers go to the
   * upstream in one `tasks/update`. 'none' when there is nothing new to ask (or no stream to ask
   * on); the error the agent's client (or the upstream) answered otherwise.
   */
  private async relayInputRequests(
    principal: Principal,
    record: TaskRecord,
    task: Detailed,
    asked: Set<string>,
    signal: AbortSignal,
  ): Promise<'answered' | 'none' | TaskAnswer> {
    const relay = currentCallRelay();
    const requests = Object.entries((task.inputRequests ?? {}) as Record<string, InputRequest>).filter(
      ([key]) => !asked.has(key),
    );
    if (!relay || requests.length === 0) return 'none';
    const related = { [RELATED_TASK_META_KEY]: { taskId: record.taskId } };
    const askAgent = async ([key, request]: [string, InputRequest]) => {
      asked.add(key);
      const params = { ...request.params, _meta: { ...request.params?._meta, ...related } };
      return [key, await relay.request(String(request.method), params, signal, key)] as const;
    };
    let responses: (readonly [string, Record<string, unknown>])[];
    try {
      responses = await Promise.all(requests.map(askAgent));
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown };
      return {
        error: { code: typeof e.code === 'number' ? e.code : ErrorCode.InternalError, message: String(e.message) },
      };
    }
    const caps = { ...relay.clientCapabilities, extensions: { [TASKS_EXTENSION]: {} } };
    const updated = await this.update(principal, record, Object.fromEntries(responses), caps);
    return 'error' in updated ? updated : 'answered';
  }

  /**
   * Answers a task's input requests: a 2026-07-28 upstream's with its `tasks/update`, a 2025-11-25
   * upstream's (held on the edge that created the task) through that edge (TaskInputHold.answer).
   */
  private async update(
    principal: Principal,
    record: TaskRecord,
    inputResponses: Record<string, unknown>,
    clientCapabilities: Record<string, unknown>,
  ): Promise<TaskAnswer> {
    if (record.heldBy) {
      const refused = await this.inputs.answer(record, inputResponses, clientCapabilities);
      return refused ? { error: refused } : { result: {} };
    }
    const answered = await this.ask(principal, record, 'tasks/update', clientCapabilities, { inputResponses });
    return 'error' in answered ? answered : { result: {} };
  }

  /**
   * A 2025-11-25 `tasks/list`: the key's own tasks, newest first, as that revision's Tasks (an open
   * one as its upstream says now, which settles it if it ended); the cursor is the next offset.
   */
  async listSession(principal: Principal, cursor: string | undefined): Promise<TaskAnswer> {
    const offset = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isSafeInteger(offset) || offset < 0) return invalid(`Invalid cursor: ${cursor}`);
    const caps = { extensions: { [TASKS_EXTENSION]: {} } };
    const { records, more } = await this.store.listForKey(principal.orgId, principal.keyId, offset, TASK_LIST_PAGE);
    const tasks = await Promise.all(
      records.map(async (record) => {
        if (record.state === 'expired' && record.final)
          return toSessionTask(this.envelope(record, JSON.parse(record.final)));
        return toSessionTask(await this.detailed(principal, record, caps));
      }),
    );
    return { result: { tasks, ...(more ? { nextCursor: String(offset + TASK_LIST_PAGE) } : {}) } };
  }

  /** Notes the 2025-11-25 session a task was created in, for its status notification. */
  async bindSession(principal: Principal, taskId: string, sessionId: string): Promise<void> {
    await this.store.bindSession(principal.orgId, taskId, sessionId);
  }

  /** A request to the task's upstream, about its own task id, with the client's capabilities. */
  private async ask(
    principal: Principal,
    record: TaskRecord,
    method: string,
    clientCapabilities: Record<string, unknown>,
    params: Record<string, unknown> = {},
  ): Promise<TaskAnswer> {
    const spec = (await this.catalog.catalogFor(record.orgId)).upstreams.get(record.upstreamId);
    if (!spec) return { error: { code: ErrorCode.InternalError, message: 'The task’s upstream is gone' } };
    const relay: UpstreamCallRelay = {
      clientCapabilities,
      log: () => undefined,
      request: async (m) => {
        throw unrelayableRequest(m, 'a task asks for input through tasks/get');
      },
    };
    try {
      const outcome = await runWithCallRelay(relay, () =>
        this.upstreams.request(
          principal,
          spec,
          { method, params: { ...params, taskId: record.upstreamTaskId } },
          ResultSchema,
        ),
      );
      if (!outcome.ok)
        return { error: { code: ErrorCode.InternalError, message: 'The task’s upstream needs the user to connect' } };
      return { result: outcome.result as Record<string, unknown> };
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown };
      return {
        error: { code: typeof e.code === 'number' ? e.code : ErrorCode.InternalError, message: String(e.message) },
      };
    }
  }

  onModuleInit(): void {
    this.stopSweep = this.clock.every(EXPIRY_SWEEP_MS, () => this.expireDue());
    // A held tasks/result that ended brought the task's end (or lost its stream): polled, settled here if it ended.
    this.inputs.onHeldResultEnded(async (held) => {
      const record = await this.store.read(held.orgId, held.taskId);
      if (record?.state !== 'open') return;
      const { principal } = parseWithBigInts<{ principal: Principal }>(record.settlement);
      await this.detailed(principal, record, { extensions: { [TASKS_EXTENSION]: {} } });
    });
  }

  onApplicationShutdown(): void {
    this.stopSweep?.();
  }

  /**
   * Tasks whose expiry came (on the edge's clock): claimed by one edge each (TaskStore.claimDue),
   * ended and settled. One sweep at a time; one asked for while a sweep runs follows it, so what
   * came due meanwhile is taken when the returned promise resolves.
   */
  expireDue(): Promise<void> {
    if (!this.sweeping) {
      this.sweeping = this.sweepDue().finally(() => (this.sweeping = null));
      return this.sweeping;
    }
    this.sweepNext ??= this.sweeping.then(() => {
      this.sweepNext = null;
      return this.expireDue();
    });
    return this.sweepNext;
  }

  private async sweepDue(): Promise<void> {
    try {
      const due = await this.store.claimDue(this.clock.now(), EXPIRY_BATCH, SETTLEMENT_CLAIM_MS);
      for (const task of due)
        await this.expire(task).catch((err: Error) =>
          this.logger.warn(`task ${task.taskId} (org ${task.orgId}) not expired yet: ${err.message}`),
        );
    } catch (err) {
      this.logger.warn(`task expiry sweep failed: ${(err as Error).message}`);
    }
  }

  // A task past its ttl: settled as it ended if the upstream says it did, else cancelled there and
  // settled as a failed call; its polls then answer that it expired.
  private async expire(task: DueTask): Promise<void> {
    const record = await this.store.read(task.orgId, task.taskId);
    if (!record || record.state !== 'open') return this.store.forgetExpiry(task);
    const { principal } = parseWithBigInts<{ principal: Principal }>(record.settlement);
    const caps = { extensions: { [TASKS_EXTENSION]: {} } };
    const asked = await this.poll(principal, record, caps);
    if ('result' in asked && TERMINAL_TASK_STATUSES.has(String(asked.result.status))) {
      await this.settle(record, endingOf(asked.result as Detailed), asked.result as Detailed);
      return;
    }
    await this.ask(principal, record, 'tasks/cancel', caps);
    await this.settle(record, { status: 'expired' });
    this.logger.log(`task ${record.taskId} (org ${record.orgId}) expired after ${record.ttlMs} ms: cancelled`);
  }
}

function endingOf(upstream: Detailed): TaskEnding {
  if (upstream.status === 'completed') {
    const parsed = CallToolResultSchema.safeParse(upstream.result ?? {});
    return parsed.success ? { status: 'completed', result: parsed.data as CallToolResult } : { status: 'failed' };
  }
  return { status: upstream.status === 'cancelled' ? 'cancelled' : 'failed' };
}

/** A 2025-11-25 `tasks/result` of an ended task: the call's result (tied to its task), else its error. */
function sessionPayload(task: Detailed): TaskAnswer {
  const related = { [RELATED_TASK_META_KEY]: { taskId: task.taskId } };
  if (task.status === 'completed') {
    const result = (task.result ?? {}) as Record<string, unknown>;
    return { result: { ...result, _meta: { ...(result._meta as object | undefined), ...related } } };
  }
  const error = task.error as { code?: unknown; message?: unknown } | undefined;
  if (task.status === 'failed' && typeof error?.code === 'number')
    return { error: { code: error.code, message: String(error.message), data: task._meta } };
  return {
    error: { code: ErrorCode.InternalError, message: `The task ${String(task.status)}`, data: task._meta },
  };
}

function waitFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function invalid(message: string): TaskAnswer {
  return { error: { code: ErrorCode.InvalidParams, message } };
}

function failedError() {
  return { code: ErrorCode.InternalError, message: 'The task failed' };
}

/** The clear error of a task polled after its expiry. */
function expiredError(record: TaskRecord): TaskAnswer {
  const expiredAt = new Date(record.expiresAt).toISOString();
  return {
    error: {
      code: ErrorCode.InvalidParams,
      message: `Task ${record.taskId} expired at ${expiredAt} (its ttl was ${record.ttlMs} ms): it was cancelled and charged as a failed call`,
      data: {
        code: 'TASK_EXPIRED',
        taskId: record.taskId,
        expiredAt,
        ttlMs: record.ttlMs,
        hint: 'Call the tool again; the edge keeps a task at most TASK_TTL_MAX_MS',
      },
    },
  };
}
