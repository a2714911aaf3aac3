import { Inject, Injectable, Logger } from '@nestjs/common';
import { type CallToolResult, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { CallAdmissionService, CallHold } from '@tollgate/admission';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Principal } from '@tollgate/identity';
import { Clock, CLOCK, microsToJson } from '@tollgate/kernel';
import {
  UpstreamCallRelay,
  UpstreamException,
  UpstreamExceptionCode,
  UpstreamSpec,
  currentCallRelay,
  runWithCallRelay,
  unrelayableRequest,
} from '@tollgate/mcp-client';
import { TASKS_EXTENSION, TaskRecord, TaskStore, declaresTasks, stringifyWithBigInts } from '@tollgate/tasks';
import type { ServedTool } from '@tollgate/upstream-registry';
import { randomUUID } from 'node:crypto';
import { CALL_META_KEY } from './call-meta';
import type { PricedCall } from './priced-call';
import { UpstreamCaller } from './upstream-caller.service';

/** A task's settlement as its record keeps it: who called, the priced call and its hold. */
export interface TaskSettlement {
  principal: Principal;
  call: Omit<PricedCall, 'tool'> & { tool: Pick<ServedTool, 'exposedName' | 'upstreamId' | 'name' | 'namespace'> };
  hold: CallHold;
}

/** A task's reservation outlives its expiry by this much, so its expiry settles it before any sweep. */
const TASK_SETTLE_GRACE_MS = 5 * 60_000;
/** How much longer than the edge keeps a task a 2025-11-25 upstream is asked to keep it. */
const UPSTREAM_TASK_TTL_MARGIN_MS = 60_000;

/**
 * A governed call its upstream runs as a task (GovernedCallPipeline, after the upstream step):
 * accepted (the agent can poll it, its reservation held until the task's expiry), recorded in
 * Redis with everything its settlement needs, and answered a CreateTaskResult of the edge's own
 * task id. Once the task ends, TaskSettler settles it on whichever edge sees that (TaskRelay).
 */
@Injectable()
export class TaskOpening {
  private readonly logger = new Logger(TaskOpening.name);

  constructor(
    private readonly admission: CallAdmissionService,
    private readonly upstreams: UpstreamCaller,
    private readonly tasks: TaskStore,
    @Inject(TOLLGATE_CONFIG) private readonly config: EdgeConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * The agent's relay, saying to the upstream that the call may become a task in either revision: a
   * 2026-07-28 upstream sees the tasks extension among the client's capabilities (a 2025-11-25 agent
   * that set params.task never declares it), a 2025-11-25 upstream gets `params.task` (a 2026-07-28
   * agent never sends one; its ttl is the edge's longest and a margin, so the upstream still knows
   * the task when the edge's expiry asks how it ended; the upstream may answer a shorter one).
   */
  askingRelay(): UpstreamCallRelay {
    const relay = currentCallRelay()!;
    return {
      ...relay,
      clientCapabilities: {
        ...relay.clientCapabilities,
        extensions: { ...relay.clientCapabilities?.extensions, [TASKS_EXTENSION]: {} },
      },
      task: relay.task ?? { ttl: this.config.edge.taskTtlMaxMs + UPSTREAM_TASK_TTL_MARGIN_MS },
    };
  }

  /**
   * Whether the task the upstream made of this call can be the edge's: only if the agent declared
   * the extension (else it cannot poll it), the call holds a reservation in Redis (a lease share is
   * this edge's alone, another edge could not settle it), and that reservation and its concurrency
   * slots are now held until the task's expiry settles it. Throws UpstreamException otherwise.
   */
  async accept(
    principal: Principal,
    upstream: UpstreamSpec,
    call: PricedCall,
    held: CallHold,
    created: Record<string, unknown>,
  ): Promise<void> {
    const refused = (why: string) => {
      this.cancelRefusedTask(principal, upstream, String(created.taskId));
      return unacceptedTask(call, why);
    };
    if (!agentTakesTasks()) throw refused('the agent did not declare the tasks extension');
    if (held.leased) throw refused('the call was admitted against a lease, which another edge could not settle');
    const now = this.clock.now();
    const until = now + this.taskTtlOf(created) + TASK_SETTLE_GRACE_MS;
    if (!(await this.admission.extendHold(held, until, now)))
      throw refused('its hold (reservation or concurrency slots) lapsed before the answer came');
  }

  /**
   * A task the upstream created for this call (accepted: accept): recorded in Redis with everything
   * its settlement needs (any edge settles it), the hold handed over, and the agent answered a
   * CreateTaskResult of the edge's own task id; its ttl is the upstream's, at most TASK_TTL_MAX_MS.
   */
  async open(
    principal: Principal,
    upstream: UpstreamSpec,
    call: PricedCall,
    held: CallHold,
    created: Record<string, unknown>,
    ofSession: boolean,
  ): Promise<CallToolResult> {
    // Its expiry is on the edge's clock, as the expiry sweep reads it (TaskRelay.expireDue).
    const now = this.clock.now();
    const ttlMs = this.taskTtlOf(created);
    const { exposedName, upstreamId, name, namespace } = call.tool;
    const settlement: TaskSettlement = {
      principal,
      call: { ...call, tool: { exposedName, upstreamId, name, namespace } },
      hold: { ...held, completed: false },
    };
    const pollIntervalMs = typeof created.pollIntervalMs === 'number' ? created.pollIntervalMs : undefined;
    const record: TaskRecord = {
      taskId: randomUUID(),
      orgId: principal.orgId,
      keyId: principal.keyId,
      upstreamId,
      upstreamTaskId: String(created.taskId),
      createdAt: typeof created.createdAt === 'string' ? created.createdAt : new Date(now).toISOString(),
      ttlMs,
      expiresAt: now + ttlMs,
      ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
      state: 'open',
      settlement: stringifyWithBigInts(settlement),
      // A 2025-11-25 upstream's task: its input requests come only on this edge's upstream session.
      ...(ofSession ? { heldBy: this.tasks.edgeId } : {}),
    };
    // Recorded, then handed over (accept made sure it can be): no record is left whose hold was
    // released. Not recorded, nobody could poll or settle it: charged here as a failed call, and
    // the upstream told to stop it (it would run on, unbilled, for a client that cannot poll it).
    try {
      await this.tasks.open(record);
    } catch (err) {
      this.logger.warn(`call ${call.callId}: task not recorded: ${(err as Error).message}`);
      this.cancelRefusedTask(principal, upstream, record.upstreamTaskId);
      throw unacceptedTask(call, 'it could not be recorded');
    }
    this.admission.handOver(held);
    return {
      resultType: 'task',
      taskId: record.taskId,
      status: created.status,
      createdAt: record.createdAt,
      lastUpdatedAt: typeof created.lastUpdatedAt === 'string' ? created.lastUpdatedAt : record.createdAt,
      ttlMs,
      ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
      // Charged when the task ends: for now its reservation, and no output delivered yet.
      _meta: { [CALL_META_KEY]: { callId: call.callId, outputTokens: 0, reservedMicros: microsToJson(held.estimate) } },
    } as unknown as CallToolResult;
  }

  /**
   * A 2025-11-25 agent's task-augmented call its upstream answered with a plain result (tasks are
   * the upstream's to decide; a tool result or an `isError` one), already settled and metered as a
   * call: the agent gets what that revision lets it read, a CreateTaskResult, of a task recorded
   * completed (its `tasks/get` says so, its `tasks/result` answers the result, free and the key's
   * own, on any edge, like any task's), kept for the ttl the agent asked (at most TASK_TTL_MAX_MS).
   * Answered as the result, the SDK client would reject it (-32602 "Invalid task creation result").
   */
  async openCompleted(
    principal: Principal,
    call: PricedCall,
    asked: { ttl?: number | null },
    answered: CallToolResult,
  ): Promise<CallToolResult> {
    const now = this.clock.now();
    const askedTtl = typeof asked.ttl === 'number' && asked.ttl > 0 ? asked.ttl : Infinity;
    const ttlMs = Math.min(askedTtl, this.config.edge.taskTtlMaxMs);
    const createdAt = new Date(now).toISOString();
    const record: TaskRecord = {
      taskId: randomUUID(),
      orgId: principal.orgId,
      keyId: principal.keyId,
      upstreamId: call.tool.upstreamId,
      // The upstream made no task: nothing of it is ever asked or settled.
      upstreamTaskId: '',
      createdAt,
      ttlMs,
      expiresAt: now + ttlMs,
      state: 'settled',
      settlement: '',
      final: JSON.stringify({ status: 'completed', lastUpdatedAt: createdAt, result: answered }),
    };
    await this.tasks.open(record);
    return {
      resultType: 'task',
      taskId: record.taskId,
      status: 'completed',
      createdAt,
      lastUpdatedAt: createdAt,
      ttlMs,
      _meta: answered._meta,
    } as unknown as CallToolResult;
  }

  /** Asks the upstream to stop a task the edge did not take on: best effort, the agent's answer does not wait. */
  private cancelRefusedTask(principal: Principal, upstream: UpstreamSpec, taskId: string): void {
    const relay = {
      clientCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      log: () => undefined,
      request: async (method: string): Promise<never> => {
        throw unrelayableRequest(method, 'a task the edge did not take on is being cancelled');
      },
    };
    runWithCallRelay(relay, () =>
      this.upstreams.request(principal, upstream, { method: 'tasks/cancel', params: { taskId } }, ResultSchema),
    ).catch((err: Error) => this.logger.warn(`upstream task ${taskId} not cancelled: ${err.message}`));
  }

  /** The task's ttl: the upstream's, at most TASK_TTL_MAX_MS. */
  private taskTtlOf(created: Record<string, unknown>): number {
    const upstreamTtl = typeof created.ttlMs === 'number' && created.ttlMs > 0 ? created.ttlMs : Infinity;
    return Math.min(upstreamTtl, this.config.edge.taskTtlMaxMs);
  }
}

/**
 * Whether the agent of the call running here can poll a task: it declared the extension
 * (2026-07-28) or augmented its 2025-11-25 `tools/call` with `params.task`.
 */
export function agentTakesTasks(): boolean {
  const relay = currentCallRelay();
  return declaresTasks(relay?.clientCapabilities) || relay?.task !== undefined;
}

/** Whether the tool's latest listing lets it run as a task. */
export function toolTakesTasks(tool: ServedTool): boolean {
  return tool.taskSupport === 'optional' || tool.taskSupport === 'required';
}

/** A task the edge cannot take on for the agent: a failed call of its upstream (UPSTREAM_ERROR). */
function unacceptedTask(call: PricedCall, why: string): UpstreamException {
  return new UpstreamException(
    UpstreamExceptionCode.ProtocolError,
    `The server behind "${call.tool.exposedName}" answered with a task, but ${why}; it is a failed call`,
    call.tool.upstreamId,
  );
}
