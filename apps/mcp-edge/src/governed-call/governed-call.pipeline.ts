import { Inject, Injectable, Logger } from '@nestjs/common';
import { type CallToolResult, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  AdmissionException,
  AdmissionExceptionCode,
  CallAdmission,
  CallAdmissionService,
  CallHold,
} from '@tollgate/admission';
import { availableMicros, BudgetStanding } from '@tollgate/budget';
import { OrgCatalog, ServedTool, ToolCatalogService } from '@tollgate/catalog';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { READ_RESULT_PAGE_TOOL } from '@tollgate/disclosure';
import { Principal } from '@tollgate/identity';
import { addToLogContext } from '@tollgate/observability';
import { Micros, microsToJson, parseExposedToolName } from '@tollgate/kernel';
import { MeteringService, RefusalRecorder, UsageEvent, newCallId } from '@tollgate/metering';
import {
  AccessDecision,
  ItemPolicyLevel,
  PolicyService,
  decideAccess,
  describeDecision,
  effectiveOutputLimits,
} from '@tollgate/policy';
import {
  FREE_PRICE,
  PriceRuleData,
  PricingService,
  actualCallCost,
  estimateCallCost,
  likelyOutputTokens,
  outputTokensAffordable,
  outputTopUp,
  splitSettlement,
} from '@tollgate/pricing';
import { RateLimitRule } from '@tollgate/rate-limit';
import { TokenEncodingName, countJsonTokens } from '@tollgate/tokens';
import {
  TASKS_EXTENSION,
  TaskRecord,
  TaskStore,
  declaresTasks,
  isCreatedTask,
  parseWithBigInts,
  stringifyWithBigInts,
} from '@tollgate/tasks';
import {
  UpstreamException,
  UpstreamExceptionCode,
  UpstreamSpec,
  currentCallRelay,
  runWithCallRelay,
  runWithUpstreamPropagation,
  unrelayableRequest,
} from '@tollgate/upstream';
import { randomUUID } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import { inSpan, inToolCallSpan, upstreamPropagation, upstreamSpanAttributes, usageTraceparent } from './call-tracing';
import { EdgeAccessLog } from '../health/edge-access-log';
import { EdgeMetrics } from '../health/edge-metrics.service';
import { EmbeddedResources } from './embedded-resources.service';
import { BUDGET_META_KEY, CALL_META_KEY, CallMeta, budgetMeta } from './call-meta';
import { PagedCallOrigin, ResultPager, StoredPage } from './result-pager.service';
import { ToolErrorCode, toolErrorOf, toolErrorResult } from './tool-error';
import { AuthRequired, UpstreamCaller } from './upstream-caller.service';
import { ARGUMENT_LIMITS, checkArguments, describeArgumentCheck } from '../mcp/argument-limits';
import { checkArgumentSchema } from '../mcp/argument-schema';
import { HostileInputAllowance } from '../mcp/hostile-input-allowance.service';

type OutputLimits = ReturnType<typeof effectiveOutputLimits>;

/** A tool the caller may see, with its price, for `tools/list`. */
export interface VisibleTool {
  tool: ServedTool;
  price: PriceRuleData | null;
}

interface PricedCall {
  callId: string;
  tool: ServedTool;
  rule: PriceRuleData;
  outputTokenCap: number;
  /** Output tokens its reservation pays for: the likely count, or fewer to fit a hard budget. */
  reservedTokens: number;
  /** More output admitted once the result was known (see outputTopUp); settled with the call. */
  topUp: CallHold | null;
  /** A task's settlement made again whose charge is already in the counters: no top-up is admitted. */
  alreadyCharged?: boolean;
  startedAt: number;
}

/** How a task ended, for its settlement: a completed task's result is answered like a call's. */
export type TaskEnding =
  { status: 'completed'; result: CallToolResult } | { status: 'failed' | 'cancelled' | 'expired' };

/** What settling a task gives every later poll: the agent's result (completed), or the call's cost. */
export interface TaskSettled {
  result?: CallToolResult;
  meta: Record<string, unknown>;
}

/** A task's settlement as its record keeps it: who called, the priced call and its hold. */
interface TaskSettlement {
  principal: Principal;
  call: Omit<PricedCall, 'tool'> & { tool: Pick<ServedTool, 'exposedName' | 'upstreamId' | 'name' | 'namespace'> };
  hold: CallHold;
}

/** A task's reservation outlives its expiry by this much, so its expiry settles it before any sweep. */
const TASK_SETTLE_GRACE_MS = 5 * 60_000;

/** What a usage event and a call's `_meta` name: a tool call, a page read of one's result, a resource read or prompt get. */
export interface MeteredCall {
  callId: string;
  tool: Pick<ServedTool, 'exposedName' | 'upstreamId' | 'name'> & { namespace?: string };
  rule: Pick<PriceRuleData, 'id'>;
  startedAt: number;
  /** An admitted top-up of output (tool calls only), settled together with the call. */
  topUp?: CallHold | null;
}

/**
 * The governed call, top to bottom: authenticate (done by the transport guard, which hands us the
 * principal) -> policy -> rate limit -> price -> reserve -> upstream -> output budget -> settle -> meter.
 * Every refusal or failure is a tool result with `isError: true` and a structured body.
 */
@Injectable()
export class GovernedCallPipeline {
  private readonly logger = new Logger(GovernedCallPipeline.name);

  constructor(
    private readonly catalog: ToolCatalogService,
    private readonly policies: PolicyService,
    private readonly pricing: PricingService,
    private readonly admission: CallAdmissionService,
    private readonly upstreams: UpstreamCaller,
    private readonly metering: MeteringService,
    private readonly metrics: EdgeMetrics,
    private readonly accessLog: EdgeAccessLog,
    private readonly pager: ResultPager,
    private readonly embeddedResources: EmbeddedResources,
    private readonly hostileInput: HostileInputAllowance,
    private readonly refusals: RefusalRecorder,
    private readonly tasks: TaskStore,
    @Inject(TOLLGATE_CONFIG) private readonly config: EdgeConfig,
  ) {}

  /** The tools this caller may call, in a stable order, each with the price in force now. */
  async visibleTools(principal: Principal): Promise<VisibleTool[]> {
    const [catalog, levels] = await Promise.all([
      this.catalog.catalogFor(principal.orgId),
      this.policies.levelsFor(principal),
    ]);
    const now = new Date();
    const out: VisibleTool[] = [];
    for (const tool of catalog.tools) {
      if (!decideAccess(levels, { namespace: tool.namespace, tool: tool.name }).allowed) continue;
      out.push({ tool, price: await this.pricing.priceFor(principal.orgId, tool.upstreamId, tool.name, now) });
    }
    return out;
  }

  async callTool(
    principal: Principal,
    exposedName: string,
    args: Record<string, unknown> | undefined,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    return inToolCallSpan(exposedName, principal, () => this.governedCall(principal, exposedName, args, signal));
  }

  private async governedCall(
    principal: Principal,
    exposedName: string,
    args: Record<string, unknown> | undefined,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    const startedAt = Date.now();
    // Arguments: over the limits, refused before any work (no admission, no upstream)
    const argumentsRefused = argumentLimitsResult(exposedName, args);
    if (argumentsRefused) {
      // Measuring them cost the edge what no budget pays for: counted against the key's allowance.
      this.hostileInput.recordRefusal(principal.keyId);
      return this.refuse(principal, startedAt, exposedName, argumentsRefused);
    }
    const catalog = await this.catalog.catalogFor(principal.orgId);

    // Policy
    const tool = catalog.byExposedName.get(exposedName);
    if (!tool)
      return this.refuse(principal, startedAt, exposedName, unknownToolResult(exposedName, catalog.disabledNamespaces));
    const levels = await inSpan('tollgate.policy', {}, () => this.policies.levelsFor(principal));
    const decision = decideAccess(levels, { namespace: tool.namespace, tool: tool.name });
    if (!decision.allowed)
      return this.refuse(principal, startedAt, exposedName, notAllowedResult(exposedName, decision), tool);
    const outputLimits = effectiveOutputLimits(levels);

    // Arguments: checked against the pinned (approved) input schema, the contract with the upstream
    const schemaRefused = argumentSchemaResult(tool, args);
    if (schemaRefused) return this.refuse(principal, startedAt, exposedName, schemaRefused, tool);

    // Price (from the in-memory price book)
    const call = await inSpan('tollgate.pricing', {}, () =>
      this.priceCall(principal, tool, newCallId(), startedAt, outputLimits.cap),
    );
    addToLogContext({ callId: call.callId });

    // A call its upstream may run as a task (the agent declared the tasks extension; the upstream
    // decides, SEP-2663) is reserved in Redis, not against this edge's leases: whichever edge sees
    // the task end settles it. It is held like any call until it is one (acceptTask). Every call of
    // such an agent takes this path: the catalog does not keep a tool's execution.taskSupport.
    const mayBecomeTask = declaresTasks(currentCallRelay()?.clientCapabilities);

    // Rate limit and reserve the likely cost, in one round trip (or none, against this edge's leases)
    const admissionStart = performance.now();
    const admission = await inSpan(
      'tollgate.admission',
      {},
      async (span) => {
        const admitted = await this.admitCall(principal, call, mayBecomeTask);
        const path = admitted.ok && admitted.hold.leased ? 'lease' : 'redis';
        span.setAttribute('tollgate.admission.path', path);
        this.metrics.recordAdmission(path, performance.now() - admissionStart);
        return admitted;
      },
      { leaf: true },
    );
    if (!admission.ok)
      return this.refuse(
        principal,
        startedAt,
        exposedName,
        admissionRefusedResult(exposedName, admission, call),
        tool,
        refusingBudgetOf(admission),
      );
    const held = admission.hold;
    try {
      return await this.pricedCall(principal, call, held, args, catalog, levels, outputLimits, signal);
    } catch (err) {
      // Settle and meter failed: the upstream ran but Redis did not record it, so no success is said.
      if (err instanceof AdmissionException && err.code === AdmissionExceptionCode.CompletionNotRecorded)
        return this.refuse(principal, startedAt, exposedName, notRecordedResult(exposedName, call.callId), tool);
      throw err;
    } finally {
      // Every path that reaches the upstream settles; any other way out frees the call, uncharged.
      this.admission.release(held);
      if (call.topUp) this.admission.release(call.topUp);
    }
  }

  /**
   * Reserves the call's likely cost (likelyOutputTokens). A hard budget that cannot cover it but
   * can cover the per-call price and some output gets the call fitted to what it has left: the
   * reservation pays for fewer tokens, and the answer delivers no more unless a top-up is admitted.
   */
  private async admitCall(principal: Principal, call: PricedCall, unleased: boolean): Promise<CallAdmission> {
    const tool = { namespace: call.tool.namespace, tool: call.tool.name };
    const admit = () =>
      this.admission.admit(
        callerOf(principal),
        tool,
        call.callId,
        estimateCallCost(call.rule, call.reservedTokens),
        call.startedAt,
        { unleased },
      );
    const admission = await admit();
    if (admission.ok || !('budgetExceeded' in admission)) return admission;
    const fits = outputTokensAffordable(call.rule, availableMicros(admission.budgetExceeded.exceeded));
    if (fits === null || fits < 1 || fits >= call.reservedTokens) return admission;
    call.reservedTokens = fits;
    return admit();
  }

  private async pricedCall(
    principal: Principal,
    call: PricedCall,
    held: CallHold,
    args: Record<string, unknown> | undefined,
    catalog: OrgCatalog,
    levels: readonly ItemPolicyLevel[],
    outputLimits: OutputLimits,
    signal: AbortSignal | undefined,
  ): Promise<CallToolResult> {
    const tool = call.tool;
    const exposedName = tool.exposedName;

    // Upstream
    let result: CallToolResult;
    const upstreamStart = Date.now();
    try {
      const called = await inSpan(
        `tools/call ${tool.name}`,
        upstreamSpanAttributes(tool.name, tool.namespace),
        () =>
          runWithUpstreamPropagation(upstreamPropagation(), () =>
            this.upstreams.callTool(principal, upstreamOf(catalog, tool), tool.name, args, signal),
          ),
        { kind: SpanKind.CLIENT },
      );
      // Nothing reached the upstream: no charge (callTool's finally releases the hold).
      if (!called.ok)
        return this.refuse(
          principal,
          call.startedAt,
          exposedName,
          authRequiredResult(exposedName, called.authRequired),
          tool,
        );
      result = called.result;
      // A task nobody can poll or settle elsewhere is a failed call (charged as one), never a free one.
      if (isCreatedTask(result)) await this.acceptTask(principal, upstreamOf(catalog, tool), call, held, result);
      const outcome = result.isError ? 'tool_error' : 'ok';
      this.metrics.recordUpstreamCall(tool.namespace, tool.name, Date.now() - upstreamStart, outcome);
      // The upstream runs the call as a task: it stays reserved until the task ends (settleTask).
      if (isCreatedTask(result)) return await this.openTask(principal, call, held, result);
    } catch (err) {
      this.metrics.recordUpstreamCall(
        tool.namespace,
        tool.name,
        Date.now() - upstreamStart,
        'error',
        signal?.aborted ? 'cancelled' : err instanceof UpstreamException ? String(err.code) : 'internal',
      );
      if (signal?.aborted) {
        // The agent cancelled (or hung up): the upstream was told, and the call is a failed one.
        const cost = failedCallCost(call);
        const standings = await this.settleAndMeter(principal, call, held, 'UPSTREAM_ERROR', cost, 0);
        return cancelledResult(exposedName, callMeta(call, cost, 0), standings);
      }
      if (!(err instanceof UpstreamException)) throw err;
      const cost = failedCallCost(call);
      const standings = await this.settleAndMeter(principal, call, held, 'UPSTREAM_ERROR', cost, 0);
      return upstreamFailureResult(exposedName, err, callMeta(call, cost, 0), standings);
    }

    try {
      // Resources embedded or linked in the result are decided by the resource policy, like a read.
      const content = await this.embeddedResources.withholdDenied(
        principal,
        tool.namespace,
        result.content ?? [],
        levels,
      );
      if (content !== result.content) result = { ...result, content };
      return await this.answerFromResult(principal, call, held, result, outputLimits);
    } catch (err) {
      // The upstream did the work, but the answer could not be made (a failure of ours, paging
      // for instance): the call is charged and metered as one that returned nothing, never free.
      if (!held.completed) {
        const cost = actualCallCost(
          call.rule,
          { failed: false, outputTokens: 0, reportedCostMicros: null },
          call.outputTokenCap,
        );
        // Its completion failing too changes nothing for the agent: the error below goes either way.
        await this.settleAndMeter(principal, call, held, 'TOOL_ERROR', cost, 0).catch(() => []);
      }
      throw err;
    }
  }

  /** The agent's answer to a result the upstream gave: within the output budget, settled and metered. */
  private async answerFromResult(
    principal: Principal,
    call: PricedCall,
    held: CallHold,
    upstreamResult: CallToolResult,
    outputLimits: OutputLimits,
  ): Promise<CallToolResult> {
    const exposedName = call.tool.exposedName;
    let result = upstreamResult;
    let outputTokens = countJsonTokens(result.content, this.tokenEncoding);
    // Output beyond what the reservation paid for is admitted now, like a page read; refused (a hard
    // budget cannot cover it), the answer delivers what the reservation paid for.
    const deliverable = await this.deliverableTokens(principal, call, outputTokens);
    // Output budget: page a large text result (never cut silently); refuse what cannot be paged.
    if (
      outputTokens > deliverable &&
      outputLimits.overflow === 'PAGE' &&
      this.pager.canPage(result) &&
      !result.isError
    ) {
      // This answer delivers (and bills) the first page; each later page is billed when it is read.
      const paged = await this.pager.pageResult(principal, pagedCallOrigin(call), result, deliverable);
      result = paged.result;
      outputTokens = paged.deliveredTokens;
    } else if (outputTokens > deliverable) {
      // Nothing of the result is delivered: a failed call, charged only if the rule charges those.
      const cost = failedCallCost(call);
      const standings = await this.settleAndMeter(principal, call, held, 'TOOL_ERROR', cost, 0);
      return outputBudgetExceededResult(
        exposedName,
        outputTokens,
        deliverable,
        call.outputTokenCap,
        callMeta(call, cost, 0),
        standings,
      );
    }

    // Settle and meter
    const failed = result.isError === true;
    const cost = actualCallCost(
      call.rule,
      { failed, outputTokens, reportedCostMicros: reportedCost(result) },
      deliverable,
    );
    const standings = await this.settleAndMeter(
      principal,
      call,
      held,
      failed ? 'TOOL_ERROR' : 'OK',
      cost,
      outputTokens,
    );
    return {
      ...result,
      _meta: {
        ...(result._meta ?? {}),
        [CALL_META_KEY]: callMeta(call, cost, outputTokens),
        [BUDGET_META_KEY]: budgetMeta(standings),
      },
    };
  }

  /**
   * Output tokens this answer may deliver: the cap when the reservation covers the result (or the
   * rule does not price output); else what the reservation paid for plus a top-up admitted against
   * the budgets for the rest up to the cap, or only what the reservation paid for if refused.
   */
  private async deliverableTokens(principal: Principal, call: PricedCall, resultTokens: number): Promise<number> {
    const topUp = outputTopUp(call.rule, call.reservedTokens, resultTokens, call.outputTokenCap);
    // No top-up needed: the result fits the reservation, or output is not priced.
    if (!topUp) return call.outputTokenCap;
    // Charged already (settleTask): what the reservation paid for, never output no one pays for.
    if (call.alreadyCharged) return call.reservedTokens;
    const more = await this.admission.admit(callerOf(principal), null, newCallId(), topUp.micros, Date.now());
    if (!more.ok) return call.reservedTokens;
    call.topUp = more.hold;
    return call.reservedTokens + topUp.tokens;
  }

  /**
   * Whether the task the upstream made of this call can be the edge's: only if the agent declared
   * the extension (else it cannot poll it), the call holds a reservation in Redis (a lease share is
   * this edge's alone, another edge could not settle it), and that reservation and its concurrency
   * slots are now held until the task's expiry settles it. Throws UpstreamException otherwise.
   */
  private async acceptTask(
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
    if (!declaresTasks(currentCallRelay()?.clientCapabilities))
      throw refused('the agent did not declare the tasks extension');
    if (held.leased) throw refused('the call was admitted against a lease, which another edge could not settle');
    const until = Date.now() + this.taskTtlOf(created) + TASK_SETTLE_GRACE_MS;
    if (!(await this.admission.extendHold(held, until))) throw refused('its reservation lapsed before the answer came');
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

  /**
   * A task the upstream created for this call (accepted: acceptTask): recorded in Redis with everything its settlement
   * needs (any edge settles it), the hold handed over, and the agent answered a CreateTaskResult of
   * the edge's own task id; its ttl is the upstream's, at most TASK_TTL_MAX_MS.
   */
  private async openTask(
    principal: Principal,
    call: PricedCall,
    held: CallHold,
    created: Record<string, unknown>,
  ): Promise<CallToolResult> {
    const now = Date.now();
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
    };
    // Recorded, then handed over (acceptTask made sure it can be): no record is left whose hold was
    // released. Not recorded, nobody could poll or settle it: charged here as a failed call.
    try {
      await this.tasks.open(record);
    } catch (err) {
      this.logger.warn(`call ${call.callId}: task not recorded: ${(err as Error).message}`);
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
   * Settles and meters a task once it ended, on whichever edge saw it end (a poll, its expiry):
   * a completed task's result is answered like a call's (embedded resources, output budget, top-up,
   * paging), any other ending is a failed call. The caller holds the task's settlement claim.
   */
  async settleTask(settlementJson: string, ending: TaskEnding, retaken = false): Promise<TaskSettled> {
    const { principal, call: stored, hold } = parseWithBigInts<TaskSettlement>(settlementJson);
    // The tool as a settlement needs it (names and upstream); the definition is not kept.
    const call = { ...stored, topUp: null } as PricedCall;
    // An earlier claim lapsed after its completion script had run (its edge died, or marking the
    // task settled failed): the counters and the outbox hold the call already, and its reservation
    // is gone. The answer is made again, with nothing charged or metered twice.
    if (retaken && !(await this.admission.stillReserved(hold))) {
      this.admission.handOver(hold);
      call.alreadyCharged = true;
    }
    try {
      if (ending.status !== 'completed') {
        const cost = failedCallCost(call);
        const standings = await this.settleAndMeter(principal, call, hold, 'UPSTREAM_ERROR', cost, 0);
        return { meta: { [CALL_META_KEY]: callMeta(call, cost, 0), [BUDGET_META_KEY]: budgetMeta(standings) } };
      }
      const levels = await this.policies.levelsFor(principal);
      const content = await this.embeddedResources.withholdDenied(
        principal,
        call.tool.namespace,
        ending.result.content ?? [],
        levels,
      );
      const result = content !== ending.result.content ? { ...ending.result, content } : ending.result;
      const answered = await this.answerFromResult(principal, call, hold, result, effectiveOutputLimits(levels));
      return { result: answered, meta: answered._meta ?? {} };
    } finally {
      // The hold is not released when settling fails: the task's settlement is retried (the next
      // poll or the expiry sweep), and a released reservation would read as "already charged".
      if (call.topUp) this.admission.release(call.topUp);
    }
  }

  /**
   * `tollgate__read_result_page`: a page read is governed like a call. Its page's tokens at the
   * original call's per-output-token price are admitted against the budgets (no rate limits: the
   * upstream is not called again), settled and metered as a usage event of the same tool and rule
   * (its own id; `resultOf` in its `_meta` names the call), so the ledger holds what was delivered.
   */
  async readResultPage(principal: Principal, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
    const startedAt = Date.now();
    const page = await this.pager.findPage(principal, args);
    if (!isStoredPage(page)) return this.refuse(principal, startedAt, READ_RESULT_PAGE_TOOL, page);
    const origin = page.origin;
    const read: MeteredCall = {
      callId: newCallId(),
      tool: { exposedName: origin.exposedName, upstreamId: origin.upstreamId, name: origin.toolName },
      rule: { id: origin.priceRuleId },
      startedAt,
    };
    const cost = BigInt(origin.perOutputTokenMicros) * BigInt(page.tokens);
    const admission = await this.admission.admit(callerOf(principal), null, read.callId, cost, startedAt);
    // Only budgets are checked for a page read (no rate limit applies to it).
    if (!admission.ok)
      return this.refuse(
        principal,
        startedAt,
        READ_RESULT_PAGE_TOOL,
        admissionRefusedResult(READ_RESULT_PAGE_TOOL, admission),
        { upstreamId: origin.upstreamId, name: origin.toolName },
        refusingBudgetOf(admission),
      );
    const standings = await this.settleAndMeter(principal, read, admission.hold, 'OK', cost, page.tokens);
    return this.pager.answerWithPage(page, {
      [CALL_META_KEY]: { ...callMeta(read, cost, page.tokens), resultOf: origin.callId },
      [BUDGET_META_KEY]: budgetMeta(standings),
    });
  }

  private get tokenEncoding(): TokenEncodingName {
    return this.config.tokens.encoding;
  }

  private async priceCall(
    principal: Principal,
    tool: ServedTool,
    callId: string,
    startedAt: number,
    policyCap: number | null,
  ): Promise<PricedCall> {
    const rule =
      (await this.pricing.priceFor(principal.orgId, tool.upstreamId, tool.name, new Date(startedAt))) ?? FREE_PRICE;
    // The tighter of the upstream's cap and the policy's; the deployment default when neither sets one.
    const caps = [tool.outputTokenCap, policyCap].filter((c): c is number => c !== null);
    const outputTokenCap = caps.length ? Math.min(...caps) : this.config.edge.defaultOutputTokenCap;
    const reservedTokens = likelyOutputTokens(tool.outputTokensP99, outputTokenCap);
    return { callId, tool, rule, outputTokenCap, reservedTokens, topUp: null, startedAt };
  }

  /**
   * Settle and meter, one step: the reservation or lease share becomes the actual cost, the
   * concurrency slots are given back and the usage event goes to the outbox, in one script with
   * every call completed in the same turn (CallAdmissionService.complete). The answer leaves only
   * once Redis has acknowledged it, so an answered call is always billed and metered; if Redis does
   * not, this throws AdmissionException(CompletionNotRecorded). The standings are the budgets as
   * this edge last saw them, with this call settled.
   */
  async settleAndMeter(
    principal: Principal,
    call: MeteredCall,
    held: CallHold,
    outcome: UsageEvent['outcome'],
    cost: Micros,
    outputTokens: number,
  ): Promise<BudgetStanding[]> {
    const latencyMs = Date.now() - call.startedAt;
    const event: UsageEvent = {
      id: call.callId,
      orgId: principal.orgId,
      teamId: principal.teamId,
      userId: principal.userId,
      keyId: principal.keyId,
      upstreamId: call.tool.upstreamId,
      toolName: call.tool.name,
      outcome,
      costMicros: cost,
      inputTokens: 0,
      outputTokens,
      latencyMs,
      priceRuleId: call.rule.id || null,
      occurredAt: new Date(call.startedAt),
      traceparent: usageTraceparent(),
    };
    // A call with a top-up settles it in the same turn, so both go in one completion script.
    const topUp = call.topUp ?? null;
    const split = topUp ? splitSettlement(cost, held.estimate) : { reservation: cost, topUp: 0n };
    const [standings] = await inSpan(
      'tollgate.completion',
      { 'tollgate.outcome': outcome },
      () =>
        Promise.all([
          this.admission.complete(held, split.reservation, this.metering.outboxEntry(event)),
          topUp ? this.admission.complete(topUp, split.topUp, null) : null,
        ]),
      { leaf: true },
    );
    const upstream = call.tool.namespace ?? parseExposedToolName(call.tool.exposedName)?.namespace ?? '';
    this.metrics.recordCall(call.tool.exposedName, upstream, outcome, latencyMs, cost);
    this.accessLog.record({
      tool: call.tool.exposedName,
      upstream,
      outcome,
      costMicros: cost,
      outputTokens,
      latencyMs,
    });
    return standings;
  }

  /**
   * Answers a refused call: counted in the metrics and recorded (fire and forget) for the refusal
   * reports and the per-call log, under the tool's own name and upstream when it is known.
   */
  private refuse(
    principal: Principal,
    startedAt: number,
    exposedName: string,
    result: CallToolResult,
    tool?: { upstreamId: string; name: string },
    budgetId: string | null = null,
  ): CallToolResult {
    const code = toolErrorOf(result)!.code;
    const latencyMs = Date.now() - startedAt;
    this.metrics.recordRefusal(exposedName, code, principal.orgId, latencyMs);
    this.refusals.record({
      orgId: principal.orgId,
      teamId: principal.teamId,
      userId: principal.userId,
      keyId: principal.keyId,
      upstreamId: tool?.upstreamId ?? null,
      toolName: tool?.name ?? exposedName,
      code,
      budgetId,
      latencyMs,
      occurredAt: new Date(startedAt),
    });
    this.accessLog.record({
      tool: exposedName,
      upstream: '',
      outcome: code,
      costMicros: 0n,
      outputTokens: 0,
      latencyMs,
    });
    return result;
  }
}

/** The budget that refused an admission, for the refusal's record (budgets "blocking now"). */
export function refusingBudgetOf(refused: Exclude<CallAdmission, { ok: true }>): string | null {
  return 'budgetExceeded' in refused ? refused.budgetExceeded.exceeded.budgetId : null;
}

function isStoredPage(page: StoredPage | CallToolResult): page is StoredPage {
  return 'origin' in page;
}

function pagedCallOrigin(call: PricedCall): PagedCallOrigin {
  return {
    callId: call.callId,
    exposedName: call.tool.exposedName,
    upstreamId: call.tool.upstreamId,
    toolName: call.tool.name,
    priceRuleId: call.rule.id,
    perOutputTokenMicros: call.rule.perOutputTokenMicros.toString(),
  };
}

export function callerOf(p: Principal) {
  return { orgId: p.orgId, teamId: p.teamId, userId: p.userId, keyId: p.keyId, timeZone: p.orgTimeZone };
}

function upstreamOf(catalog: OrgCatalog, tool: ServedTool) {
  const spec = catalog.upstreams.get(tool.upstreamId);
  if (!spec) throw new Error(`catalog inconsistency: upstream ${tool.upstreamId} of ${tool.exposedName} missing`);
  return spec;
}

export function callMeta(call: MeteredCall, cost: Micros, outputTokens: number): CallMeta {
  return {
    callId: call.callId,
    tool: call.tool.exposedName,
    costMicros: microsToJson(cost),
    outputTokens,
    latencyMs: Date.now() - call.startedAt,
  };
}

/** A task the edge cannot take on for the agent: a failed call of its upstream (UPSTREAM_ERROR). */
function unacceptedTask(call: PricedCall, why: string): UpstreamException {
  return new UpstreamException(
    UpstreamExceptionCode.ProtocolError,
    `The server behind "${call.tool.exposedName}" answered with a task, but ${why}; it is a failed call`,
    call.tool.upstreamId,
  );
}

/** What a call that delivered nothing costs (free unless its rule charges failed calls). */
function failedCallCost(call: PricedCall): Micros {
  return actualCallCost(call.rule, { failed: true, outputTokens: 0, reportedCostMicros: null }, call.outputTokenCap);
}

/** A cost the tool reported in `_meta["tollgate/cost"].costMicros`; honoured only where the price rule allows. */
function reportedCost(result: CallToolResult): Micros | null {
  const reported = (result._meta?.['tollgate/cost'] as { costMicros?: unknown } | undefined)?.costMicros;
  return typeof reported === 'number' && Number.isSafeInteger(reported) ? BigInt(reported) : null;
}

/** INVALID_ARGUMENTS when the call's arguments exceed a limit of ARGUMENT_LIMITS, else null. */
function argumentLimitsResult(name: string, args: Record<string, unknown> | undefined): CallToolResult | null {
  const check = checkArguments(args);
  if (check.ok) return null;
  return toolErrorResult({
    code: ToolErrorCode.InvalidArguments,
    message: describeArgumentCheck(name, check),
    hint: `Send smaller, flatter arguments (at most ${ARGUMENT_LIMITS.maxDepth} levels deep, ${ARGUMENT_LIMITS.maxBytes} bytes as JSON, ${ARGUMENT_LIMITS.maxKeys} keys in all and ${ARGUMENT_LIMITS.maxKeysPerObject} per object). Nothing was charged.`,
    tool: name,
    limit: check.limit,
    allowed: check.allowed,
    measured: check.measured,
    charged: false,
  });
}

/** INVALID_ARGUMENTS naming the parameter when the arguments do not fit the tool's pinned input schema, else null. */
function argumentSchemaResult(tool: ServedTool, args: Record<string, unknown> | undefined): CallToolResult | null {
  const violation = checkArgumentSchema(tool.pinnedHash, tool.definition.inputSchema, args);
  if (!violation) return null;
  const what = violation.parameter ? `parameter "${violation.parameter}"` : 'the arguments';
  return toolErrorResult({
    code: ToolErrorCode.InvalidArguments,
    message: `The arguments of "${tool.exposedName}" do not fit its approved definition: ${what} ${violation.problem}.`,
    hint: violation.notInApprovedDefinition
      ? 'Call the tool with the parameters its listed schema names; a newer definition may add this one once an administrator approves it. Nothing was charged.'
      : 'Fix the arguments to match the input schema listed for this tool. Nothing was charged.',
    tool: tool.exposedName,
    parameter: violation.parameter,
    problem: violation.problem,
    charged: false,
  });
}

/** The upstream answered but Redis did not acknowledge the call's settlement and usage event. */
export function notRecordedResult(name: string, callId: string): CallToolResult {
  return toolErrorResult({
    code: ToolErrorCode.UsageNotRecorded,
    message: `"${name}" ran, but Tollgate could not record the call (its store did not acknowledge it), so its result is withheld.`,
    hint: 'The tool may have acted (maybe executed): check its effects before calling it again. Retry in a second or two.',
    tool: name,
    callId,
    maybeExecuted: true,
    retryAfterMs: 1000,
  });
}

function unknownToolResult(name: string, disabledNamespaces: ReadonlySet<string>): CallToolResult {
  const parsed = parseExposedToolName(name);
  if (parsed && disabledNamespaces.has(parsed.namespace)) {
    return toolErrorResult({
      code: ToolErrorCode.UpstreamDisabled,
      message: `"${name}" is not available: its server "${parsed.namespace}" is disabled by an administrator.`,
      hint: 'Use another tool, or ask an administrator to enable the server again.',
      tool: name,
      namespace: parsed.namespace,
    });
  }
  return toolErrorResult({
    code: ToolErrorCode.UnknownTool,
    message: `No tool named "${name}" is available.`,
    hint: parsed
      ? 'List tools again: the tool may have been removed or renamed upstream.'
      : 'Tool names look like "<server>__<tool>"; list tools to see them.',
    tool: name,
  });
}

function notAllowedResult(name: string, decision: Exclude<AccessDecision, { allowed: true }>): CallToolResult {
  return toolErrorResult({
    code: ToolErrorCode.ToolNotAllowed,
    message: `Calling "${name}" is not allowed for this key: ${describeDecision(decision)}.`,
    hint: 'Use one of the tools listed for this key, or ask an administrator to allow this tool.',
    tool: name,
    reason: decision.reason,
    ...('scope' in decision ? { scope: decision.scope } : {}),
    ...('rule' in decision ? { rule: decision.rule } : {}),
  });
}

/** A call admission refused: by a rate limit, a budget, or because counters are being rebuilt. */
export function admissionRefusedResult(
  name: string,
  refused: Exclude<CallAdmission, { ok: true }>,
  call?: Pick<PricedCall, 'rule' | 'reservedTokens' | 'outputTokenCap'>,
): CallToolResult {
  if ('rateLimited' in refused)
    return rateLimitedResult(
      name,
      refused.rateLimited.rule,
      refused.rateLimited.kind,
      refused.rateLimited.retryAfterMs,
    );
  if ('budgetExceeded' in refused)
    return budgetExceededResult(name, refused.budgetExceeded.exceeded, refused.budgetExceeded.requestedMicros, call);
  return toolErrorResult({
    code: ToolErrorCode.CountersUnavailable,
    message:
      refused.countersUnavailable.reason === 'counter-corrupt'
        ? `"${name}" cannot be admitted now: a budget counter of this call is unreadable and is being rebuilt from the ledger.`
        : `"${name}" cannot be admitted now: Tollgate's budget and rate-limit counters are being rebuilt (their store lost its data).`,
    hint: `Nothing ran and nothing was charged. Retry after ${Math.ceil(refused.countersUnavailable.retryAfterMs / 1000)} s.`,
    tool: name,
    retryAfterMs: refused.countersUnavailable.retryAfterMs,
    charged: false,
  });
}

function rateLimitedResult(
  name: string,
  rule: RateLimitRule,
  kind: 'WINDOW' | 'CONCURRENCY',
  retryAfterMs: number,
): CallToolResult {
  const what =
    kind === 'WINDOW'
      ? `${rule.callsPerWindow} calls per ${rule.windowSeconds} s`
      : `${rule.maxConcurrent} concurrent calls`;
  return toolErrorResult({
    code: ToolErrorCode.RateLimited,
    message: `The ${rule.scope.toLowerCase()} rate limit of ${what} for "${rule.toolPattern}" is reached.`,
    hint:
      kind === 'WINDOW'
        ? `Retry after ${Math.ceil(retryAfterMs / 1000)} s.`
        : `A slot frees when one of the ${rule.maxConcurrent} calls in flight ends; retry then, or after ${Math.ceil(retryAfterMs / 1000)} s at the latest.`,
    tool: name,
    scope: rule.scope,
    toolPattern: rule.toolPattern,
    limitKind: kind,
    ...(kind === 'WINDOW'
      ? { callsPerWindow: rule.callsPerWindow, windowSeconds: rule.windowSeconds }
      : { maxConcurrent: rule.maxConcurrent }),
    retryAfterMs,
  });
}

function budgetExceededResult(
  name: string,
  b: BudgetStanding,
  requested: Micros,
  call?: Pick<PricedCall, 'rule' | 'reservedTokens' | 'outputTokenCap'>,
): CallToolResult {
  const available = availableMicros(b);
  // Priced per output token: say how many tokens the request reserved for, and what is left buys.
  const perToken = call && call.rule.perOutputTokenMicros > 0n ? call : null;
  const affordable = perToken ? outputTokensAffordable(perToken.rule, available)! : null;
  const tokens = perToken
    ? `It reserves for ${perToken.reservedTokens} output tokens (output token cap ${perToken.outputTokenCap}); what is left ${
        affordable! > 0
          ? `pays for ${affordable} after the per-call price: lower the output token cap (outputTokenCap of a policy or the upstream) to ${affordable} or less, or`
          : 'does not cover the per-call price:'
      } `
    : '';
  const reset = b.resetsAt
    ? `The budget resets at ${b.resetsAt.toISOString()}; ask an administrator to raise it before then.`
    : 'This budget does not reset; ask an administrator to raise it.';
  // Allowance other edges hold as leases comes back within seconds if their calls do not use it.
  const leased =
    b.leasedMicros > 0n
      ? `Other edges hold ${b.leasedMicros} micro-units of it for calls they are admitting; what they do not use comes back within seconds. `
      : '';
  return toolErrorResult({
    code: ToolErrorCode.BudgetExceeded,
    message: `The ${b.period.toLowerCase()} ${b.scope.toLowerCase()} budget cannot cover this call.`,
    hint: tokens + leased + reset,
    tool: name,
    scope: b.scope,
    period: b.period,
    limitMicros: microsToJson(b.limitMicros),
    spentMicros: microsToJson(b.spentMicros),
    reservedMicros: microsToJson(b.reservedMicros),
    leasedMicros: microsToJson(b.leasedMicros),
    availableMicros: microsToJson(available),
    requestedMicros: microsToJson(requested),
    resetsAt: b.resetsAt?.toISOString() ?? null,
    ...(perToken
      ? {
          reservedOutputTokens: perToken.reservedTokens,
          outputTokenCap: perToken.outputTokenCap,
          affordableOutputTokens: affordable,
        }
      : {}),
  });
}

/** The user has no usable token for a per-user OAuth upstream: the same answer on every path, with the URL to connect. */
export function authRequiredResult(name: string, auth: AuthRequired): CallToolResult {
  const what =
    auth.reason === 'not_connected'
      ? `has not connected an account at "${auth.namespace}"`
      : `has a connection to "${auth.namespace}" that expired and could not be renewed`;
  return toolErrorResult({
    code: ToolErrorCode.AuthRequired,
    message: `"${name}" acts as the calling user, who ${what}.`,
    hint: auth.connectUrl
      ? `Ask the user to open ${auth.connectUrl} in a browser, sign in and allow access (the link works once, until ${auth.connectUrlExpiresAt}), then call the tool again.`
      : `The user must connect their "${auth.namespace}" account, but no connect link could be made (${auth.connectError ?? 'unknown reason'}); ask an administrator.`,
    tool: name,
    upstream: auth.namespace,
    upstreamId: auth.upstreamId,
    reason: auth.reason,
    connectUrl: auth.connectUrl,
    connectUrlExpiresAt: auth.connectUrlExpiresAt,
    charged: false,
  });
}

export function upstreamFailureResult(
  name: string,
  err: UpstreamException,
  meta: CallMeta,
  standings: BudgetStanding[],
): CallToolResult {
  const code = {
    [UpstreamExceptionCode.Unavailable]: ToolErrorCode.UpstreamUnavailable,
    [UpstreamExceptionCode.Timeout]: ToolErrorCode.UpstreamTimeout,
    [UpstreamExceptionCode.CircuitOpen]: ToolErrorCode.UpstreamCircuitOpen,
    [UpstreamExceptionCode.ProtocolError]: ToolErrorCode.UpstreamError,
    [UpstreamExceptionCode.Unauthorized]: ToolErrorCode.UpstreamUnauthorized,
  }[err.code];
  return toolErrorResult(
    {
      code,
      message: err.message,
      hint: err.retryAfterMs
        ? `Try again in ${Math.ceil(err.retryAfterMs / 1000)} s.`
        : 'The server behind this tool failed; try again later or use another tool.',
      tool: name,
      charged: meta.costMicros > 0,
      ...(err.retryAfterMs ? { retryAfterMs: err.retryAfterMs } : {}),
    },
    { [CALL_META_KEY]: meta, [BUDGET_META_KEY]: budgetMeta(standings) },
  );
}

function cancelledResult(name: string, meta: CallMeta, standings: BudgetStanding[]): CallToolResult {
  return toolErrorResult(
    {
      code: ToolErrorCode.Cancelled,
      message: `The call of "${name}" was cancelled by the agent; the upstream was told to stop.`,
      hint: 'Call the tool again if its result is still needed.',
      tool: name,
      charged: meta.costMicros > 0,
    },
    { [CALL_META_KEY]: meta, [BUDGET_META_KEY]: budgetMeta(standings) },
  );
}

function outputBudgetExceededResult(
  name: string,
  tokens: number,
  deliverable: number,
  cap: number,
  meta: CallMeta,
  standings: BudgetStanding[],
): CallToolResult {
  const byBudget = deliverable < cap;
  return toolErrorResult(
    {
      code: ToolErrorCode.OutputBudgetExceeded,
      message: byBudget
        ? `The result of "${name}" is ${tokens} tokens; a hard budget pays for ${deliverable} of them (the output token cap is ${cap}).`
        : `The result of "${name}" is ${tokens} tokens, over the cap of ${cap}.`,
      hint: byBudget
        ? `The result is not plain text, so it cannot be paged: ask for ${deliverable} tokens or less, lower the output token cap (outputTokenCap of a policy or the upstream) to ${deliverable}, or ask an administrator to raise the budget.`
        : 'The result is not plain text, so it cannot be paged: ask for less (narrow the query, fewer items, a smaller page).',
      tool: name,
      outputTokens: tokens,
      outputTokenCap: cap,
      ...(byBudget ? { affordableOutputTokens: deliverable } : {}),
      charged: meta.costMicros > 0,
    },
    { [CALL_META_KEY]: meta, [BUDGET_META_KEY]: budgetMeta(standings) },
  );
}
