import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { CallToolResult, CallToolResultSchema, ErrorCode, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { ToolCatalogService } from '@tollgate/catalog';
import { Principal } from '@tollgate/identity';
import {
  DueTask,
  TASKS_EXTENSION,
  TERMINAL_TASK_STATUSES,
  TaskRecord,
  TaskStore,
  parseWithBigInts,
} from '@tollgate/tasks';
import { UpstreamCallRelay, runWithCallRelay, unrelayableRequest } from '@tollgate/upstream';
import { GovernedCallPipeline, TaskEnding, TaskSettled } from './governed-call.pipeline';
import { UpstreamCaller } from './upstream-caller.service';

/** How long one edge holds a task's settlement (an edge that dies holding it lets another retry then). */
const SETTLEMENT_CLAIM_MS = 60_000;
/** How often each edge looks for tasks whose expiry came, and how many it takes at a time. */
const EXPIRY_SWEEP_MS = 1_000;
const EXPIRY_BATCH = 20;

export type TaskAnswer =
  { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } };

type Detailed = Record<string, unknown> & { status?: string };

/**
 * The tasks extension through the edge, after a task-augmented call was admitted and reserved
 * (GovernedCallPipeline.openTask): `tasks/get`, `tasks/update` and `tasks/cancel` of the key that
 * made the task, relayed to its upstream on any edge (the task is in Redis, TaskStore); free, no
 * usage event of their own. The first edge that sees the task end (completed, failed, cancelled)
 * settles and meters it, once; a task that outlives its ttl is cancelled upstream and settled as a
 * failed call by whichever edge claims its expiry first.
 */
@Injectable()
export class TaskRelay implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(TaskRelay.name);
  private sweep: NodeJS.Timeout | null = null;
  private sweeping = false;

  constructor(
    private readonly store: TaskStore,
    private readonly pipeline: GovernedCallPipeline,
    private readonly upstreams: UpstreamCaller,
    private readonly catalog: ToolCatalogService,
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
        const answered = await this.ask(principal, record, 'tasks/update', clientCapabilities, {
          inputResponses: params.inputResponses ?? {},
        });
        return 'error' in answered ? answered : { result: {} };
      }
      default: {
        // Cancelling an ended task is acknowledged like any other (idempotent).
        if (record.state !== 'open') return { result: {} };
        await this.ask(principal, record, 'tasks/cancel', clientCapabilities);
        // It may have ended before the cancel reached it: settled as it ended, else as cancelled.
        const after = await this.ask(principal, record, 'tasks/get', clientCapabilities);
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
    const asked = await this.ask(principal, record, 'tasks/get', clientCapabilities);
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
   * it (GovernedCallPipeline.settleTask) and records what later polls answer. Null when another
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
      settled = await this.pipeline.settleTask(record.settlement, ending, claim.retaken);
    } catch (err) {
      await this.store.releaseClaim(record.orgId, record.taskId);
      throw err;
    }
    const lastUpdatedAt =
      typeof upstream?.lastUpdatedAt === 'string' ? upstream.lastUpdatedAt : new Date().toISOString();
    const final: Record<string, unknown> =
      ending.status === 'completed'
        ? { status: 'completed', lastUpdatedAt, result: settled.result }
        : ending.status === 'failed'
          ? { status: 'failed', lastUpdatedAt, error: upstream?.error ?? failedError(), _meta: settled.meta }
          : { status: 'cancelled', lastUpdatedAt, _meta: settled.meta };
    await this.store.settled(record.orgId, record.taskId, ending.status === 'expired' ? 'expired' : 'settled', final);
    return final;
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
    this.sweep = setInterval(() => void this.expireDue(), EXPIRY_SWEEP_MS);
    this.sweep.unref();
  }

  onApplicationShutdown(): void {
    if (this.sweep) clearInterval(this.sweep);
  }

  /** Tasks whose expiry came: claimed by one edge each (TaskStore.claimDue), ended and settled. */
  async expireDue(now = Date.now()): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const due = await this.store.claimDue(now, EXPIRY_BATCH, SETTLEMENT_CLAIM_MS);
      for (const task of due)
        await this.expire(task).catch((err: Error) =>
          this.logger.warn(`task ${task.taskId} (org ${task.orgId}) not expired yet: ${err.message}`),
        );
    } catch (err) {
      this.logger.warn(`task expiry sweep failed: ${(err as Error).message}`);
    } finally {
      this.sweeping = false;
    }
  }

  // A task past its ttl: settled as it ended if the upstream says it did, else cancelled there and
  // settled as a failed call; its polls then answer that it expired.
  private async expire(task: DueTask): Promise<void> {
    const record = await this.store.read(task.orgId, task.taskId);
    if (!record || record.state !== 'open') return this.store.forgetExpiry(task);
    const { principal } = parseWithBigInts<{ principal: Principal }>(record.settlement);
    const caps = { extensions: { [TASKS_EXTENSION]: {} } };
    const asked = await this.ask(principal, record, 'tasks/get', caps);
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
