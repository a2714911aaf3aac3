import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { ErrorCode, RELATED_TASK_META_KEY, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { ToolCatalogService } from '@tollgate/upstream-registry';
import { Principal } from '@tollgate/identity';
import { RedisService } from '@tollgate/redis';
import { TaskInputRequest, TaskRecord, TaskStore, parseWithBigInts } from '@tollgate/tasks';
import {
  ClientRequestError,
  UpstreamCallRelay,
  UpstreamException,
  UpstreamExceptionCode,
  declares,
  requiredCapability,
  runWithCallRelay,
} from '@tollgate/mcp-client';
import { UpstreamCaller } from './upstream-caller.service';

/**
 * `<hold|drop> <edge id> <org id> <task id>`: the edge that created a task is asked to hold its
 * `tasks/result`, or told that the task ended (its unanswered requests are dropped).
 */
const HOLD_CHANNEL = 'task-input-hold';
/** An agent's answer to one held input request, for the edge that holds it. */
const ANSWER_CHANNEL = 'task-input-answer';
/** The revision's error for a request that lacks a client capability it needs. */
const MISSING_CAPABILITY = -32021;

type JsonRpcError = { code: number; message: string; data?: unknown };

interface Waiter {
  resolve: (result: Record<string, unknown>) => void;
  reject: (err: Error) => void;
}

/**
 * The input requests of a 2025-11-25 upstream's task, for agents that answer with `tasks/update`
 * (2026-07-28, tasks extension). An SDK 1.32 upstream queues a task's requests per (task, MCP
 * session) and delivers them only on a `tasks/result` of the session that created the task, whose
 * answers must come back on that session, matched by JSON-RPC id. So the edge that created the task
 * (`TaskRecord.heldBy`) holds that `tasks/result` open when any edge's poll sees `input_required`
 * (asked over Redis); the requests it receives are kept on the task (any edge's `tasks/get`
 * inlines them under stable keys); an agent's answer, on any edge, is published to the holder,
 * which answers the upstream. The held `tasks/result` also brings the task's end, settled there.
 */
@Injectable()
export class TaskInputHold implements OnModuleInit {
  private readonly logger = new Logger(TaskInputHold.name);
  /** Tasks whose `tasks/result` this edge holds now. */
  private readonly holding = new Set<string>();
  /** Input requests this edge holds for the upstream, by `<org>|<task>|<key>`. */
  private readonly waiters = new Map<string, Waiter>();
  private ended: (record: TaskRecord) => Promise<void> = async () => undefined;

  constructor(
    private readonly store: TaskStore,
    private readonly redis: RedisService,
    private readonly upstreams: UpstreamCaller,
    private readonly catalog: ToolCatalogService,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.redis.subscribe(HOLD_CHANNEL, (message) => {
      const [verb, edgeId, orgId, taskId] = message.split(' ');
      if (edgeId !== this.store.edgeId) return;
      if (verb === 'drop') return this.dropWaiters(orgId, taskId);
      void this.store.read(orgId, taskId).then(
        (record) => record && this.hold(record),
        (err: Error) => this.logger.warn(`task ${taskId}: not held: ${err.message}`),
      );
    });
    await this.redis.subscribe(ANSWER_CHANNEL, (message) => {
      const { waiter, result } = JSON.parse(message) as { waiter: string; result: Record<string, unknown> };
      const pending = this.waiters.get(waiter);
      this.waiters.delete(waiter);
      pending?.resolve(result);
    });
  }

  /** What runs when a held `tasks/result` ends: the task is polled (and settled if it ended). */
  onHeldResultEnded(ended: (record: TaskRecord) => Promise<void>): void {
    this.ended = ended;
  }

  /**
   * The requests a task in `input_required` waits on, by key (empty until its holder has them);
   * its holder is asked to hold its `tasks/result` if it does not already.
   */
  async pending(record: TaskRecord): Promise<Record<string, TaskInputRequest>> {
    if (record.heldBy === this.store.edgeId) void this.hold(record);
    else if (record.heldBy)
      await this.redis.publish(HOLD_CHANNEL, `hold ${record.heldBy} ${record.orgId} ${record.taskId}`);
    return this.store.inputRequests(record.orgId, record.taskId);
  }

  /**
   * A held task ended (settled on any edge): its unanswered requests are dropped, here and on its
   * holder (whose upstream no longer waits on them).
   */
  async taskEnded(record: TaskRecord): Promise<void> {
    if (!record.heldBy) return;
    await this.store.clearInputRequests(record.orgId, record.taskId);
    if (record.heldBy === this.store.edgeId) this.dropWaiters(record.orgId, record.taskId);
    else await this.redis.publish(HOLD_CHANNEL, `drop ${record.heldBy} ${record.orgId} ${record.taskId}`);
  }

  private dropWaiters(orgId: string, taskId: string): void {
    for (const [key, waiter] of this.waiters)
      if (key.startsWith(`${orgId}|${taskId}|`)) {
        this.waiters.delete(key);
        waiter.reject(new ClientRequestError(ErrorCode.InvalidRequest, 'The task ended'));
      }
  }

  /**
   * An agent's `tasks/update` of a held task: each response goes to the request its key names
   * (once: the first answer takes it), on whichever edge holds it. A request whose capability the
   * agent did not declare cannot be answered by it (-32021 naming the capability), and is left
   * waiting; an unknown (or already answered) key is -32602. Null when all were passed on.
   */
  async answer(
    record: TaskRecord,
    inputResponses: Record<string, unknown>,
    clientCapabilities: Record<string, unknown>,
  ): Promise<JsonRpcError | null> {
    const answers: [string, Record<string, unknown>][] = [];
    for (const [key, response] of Object.entries(inputResponses)) {
      const request = await this.store.inputRequest(record.orgId, record.taskId, key);
      if (!request) return { code: ErrorCode.InvalidParams, message: `Unknown input request: ${key}` };
      const required = requiredCapability(request);
      if (required && !declares(clientCapabilities, required))
        return {
          code: MISSING_CAPABILITY,
          message: `The task's input request ${key} (${request.method}) needs a capability the client did not declare`,
          data: { requiredCapabilities: required },
        };
      if (typeof response !== 'object' || response === null || Array.isArray(response))
        return { code: ErrorCode.InvalidParams, message: `inputResponses.${key} must be an object` };
      answers.push([key, response as Record<string, unknown>]);
    }
    for (const [key, result] of answers) {
      if (!(await this.store.takeInputRequest(record.orgId, record.taskId, key))) continue;
      const waiter = waiterKey(record, key);
      const local = this.waiters.get(waiter);
      this.waiters.delete(waiter);
      if (local) local.resolve(result);
      else await this.redis.publish(ANSWER_CHANNEL, JSON.stringify({ waiter, result }));
    }
    return null;
  }

  /**
   * Holds the task's `tasks/result` on this edge's upstream session (the one that created it): each
   * request on it is kept on the task until an agent answers it; asked again after our call timeout
   * while the task is open. When it ends the task is polled, which settles it if it ended.
   */
  private async hold(record: TaskRecord): Promise<void> {
    if (this.holding.has(record.taskId) || record.state !== 'open') return;
    this.holding.add(record.taskId);
    try {
      const { principal } = parseWithBigInts<{ principal: Principal }>(record.settlement);
      for (;;) {
        const outcome = await this.heldResult(principal, record);
        if (outcome === 'answered') break;
        const now = await this.store.read(record.orgId, record.taskId);
        if (now?.state !== 'open' || outcome !== 'timed out') break;
      }
      await this.ended(record);
    } catch (err) {
      this.logger.warn(`task ${record.taskId}: held tasks/result ended: ${(err as Error).message}`);
    } finally {
      this.holding.delete(record.taskId);
    }
  }

  // One `tasks/result` of the task on this edge's session: 'answered' once it brought the task's end.
  private async heldResult(principal: Principal, record: TaskRecord): Promise<'answered' | 'timed out' | 'failed'> {
    const spec = (await this.catalog.catalogFor(record.orgId)).upstreams.get(record.upstreamId);
    if (!spec) return 'failed';
    const relay: UpstreamCallRelay = {
      log: () => undefined,
      // Kept until an agent answers, beyond this stream (the answer is posted on the session).
      request: (method, params) =>
        this.keep(record, { method, ...(params ? { params: related(record, params) } : {}) }),
    };
    try {
      const outcome = await runWithCallRelay(relay, () =>
        this.upstreams.request(
          principal,
          spec,
          { method: 'tasks/result', params: { taskId: record.upstreamTaskId } },
          ResultSchema,
        ),
      );
      return outcome.ok ? 'answered' : 'failed';
    } catch (err) {
      if (err instanceof UpstreamException) return err.code === UpstreamExceptionCode.Timeout ? 'timed out' : 'failed';
      // The upstream's JSON-RPC error: a failed or cancelled task's tasks/result is its error.
      return 'answered';
    }
  }

  private keep(record: TaskRecord, request: TaskInputRequest): Promise<Record<string, unknown>> {
    const key = `input-${randomBytes(6).toString('hex')}`;
    const waiter = waiterKey(record, key);
    const answered = new Promise<Record<string, unknown>>((resolve, reject) => {
      this.waiters.set(waiter, { resolve, reject });
    });
    return this.store.addInputRequest(record, key, request).then(
      () => answered,
      (err: Error) => {
        this.waiters.delete(waiter);
        throw new ClientRequestError(
          ErrorCode.InternalError,
          `Tollgate could not keep ${request.method}: ${err.message}`,
        );
      },
    );
  }
}

function waiterKey(record: TaskRecord, key: string): string {
  return `${record.orgId}|${record.taskId}|${key}`;
}

// The upstream's request names its own task id: the agent knows the edge's.
function related(record: TaskRecord, params: Record<string, unknown>): Record<string, unknown> {
  const meta = params._meta as Record<string, unknown> | undefined;
  if (!meta?.[RELATED_TASK_META_KEY]) return params;
  return { ...params, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId: record.taskId } } };
}
