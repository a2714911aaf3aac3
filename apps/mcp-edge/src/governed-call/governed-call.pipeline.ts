import { Inject, Injectable } from '@nestjs/common';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  AdmissionException,
  AdmissionExceptionCode,
  CallAdmission,
  CallAdmissionService,
  CallHold,
} from '@tollgate/admission';
import { availableMicros, BudgetStanding } from '@tollgate/budget';
import { OrgCatalog, ServedTool, ToolCatalogService } from '@tollgate/upstream-registry';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { READ_RESULT_PAGE_TOOL } from '@tollgate/disclosure';
import { Principal } from '@tollgate/identity';
import { addToLogContext } from '@tollgate/observability';
import { Clock, CLOCK, Micros, microsToJson, parseExposedToolName } from '@tollgate/kernel';
import { MeteringService, RefusalRecorder, UsageEvent, newCallId } from '@tollgate/usage';
import { ItemPolicyLevel, PolicyService, decideAccess, effectiveOutputLimits } from '@tollgate/policy';
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
import { TokenEncodingName, countJsonTokens } from '@tollgate/tokens';
import { flatCreatedTask, isCreatedTask } from '@tollgate/tasks';
import { UpstreamException, currentCallRelay, runWithCallRelay } from '@tollgate/mcp-client';
import { Attributes, Span, SpanKind } from '@opentelemetry/api';
import {
  inSpan,
  inToolCallSpan,
  spansMade,
  upstreamPropagation,
  upstreamSpanAttributes,
  usageTraceparent,
} from './call-tracing';
import { EdgeAccessLog } from '../health/edge-access-log';
import { EdgeMetrics } from '../health/edge-metrics.service';
import { EmbeddedResources, carriesResources } from './embedded-resources.service';
import { BUDGET_META_KEY, CALL_META_KEY, CallMeta, budgetMeta } from './call-meta';
import { PricedCall, failedCallCost } from './priced-call';
import { PagedCallOrigin, ResultPager, StoredPage } from './result-pager.service';
import { TaskOpening, agentTakesTasks, toolTakesTasks } from './task-opening.service';
import { toolErrorOf } from './tool-error';
import { UpstreamCaller } from './upstream-caller.service';
import {
  admissionRefusedResult,
  argumentLimitsResult,
  argumentSchemaResult,
  authRequiredResult,
  cancelledResult,
  notAllowedResult,
  notRecordedResult,
  outputBudgetExceededResult,
  refusingBudgetOf,
  taskNotSupportedResult,
  unknownToolResult,
  upstreamFailureResult,
} from './call-refusals';
import { HostileInputAllowance } from '../endpoint/hostile-input-allowance.service';

type OutputLimits = ReturnType<typeof effectiveOutputLimits>;

// Made once, not on every call: a span without attributes of its own, and a leaf span's options.
const NO_ATTRIBUTES = Object.freeze({});
const LEAF_SPAN = Object.freeze({ leaf: true });
const CLIENT_SPAN = Object.freeze({ kind: SpanKind.CLIENT });
// The completion span's attributes, one object per outcome.
const OUTCOME_ATTRIBUTES: Readonly<Record<UsageEvent['outcome'], Attributes>> = Object.freeze({
  OK: Object.freeze({ 'tollgate.outcome': 'OK' }),
  TOOL_ERROR: Object.freeze({ 'tollgate.outcome': 'TOOL_ERROR' }),
  UPSTREAM_ERROR: Object.freeze({ 'tollgate.outcome': 'UPSTREAM_ERROR' }),
});

/** A tool the caller may see, with its price, for `tools/list`. */
export interface VisibleTool {
  tool: ServedTool;
  price: PriceRuleData | null;
}

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
 * The governed call of a `tools/call`, in the order it runs. The caller is already authenticated
 * (McpEndpoint resolved the key to this principal) and the call routed here (ToolRouter):
 * argument limits -> the tool in the org's catalog -> policy (and a 2025-11-25 task-augmented
 * call's task support) -> arguments against the pinned schema -> price -> admission (rate limits
 * and the reservation in one Lua script, or this edge's lease) -> upstream -> embedded resources
 * (resource policy) -> output budget (top-up or paging) -> settle and meter (one completion
 * script) -> the answer, with its cost in `_meta`.
 * Every refusal or failure is a tool result with `isError: true` (call-refusals.ts builds them).
 * A call its upstream runs as a task leaves after the upstream step (TaskOpening records it);
 * TaskSettler finishes it once the task ends, through answerResult and settleAndMeter.
 * Beside the call: a page read of a paged result (readResultPage) and the tools a caller may list.
 */
@Injectable()
export class GovernedCallPipeline {
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
    private readonly tasks: TaskOpening,
    @Inject(TOLLGATE_CONFIG) private readonly config: EdgeConfig,
    // The time a call is admitted, recorded and timed at (a rate-limit window, a budget period).
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  // Not async: it hands on inToolCallSpan's promise (an async wrapper would add a promise and its turns).
  callTool(
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
    const startedAt = this.clock.now();
    // Arguments: over the limits, refused before any work (no admission, no upstream)
    const argumentsRefused = argumentLimitsResult(exposedName, args);
    if (argumentsRefused) {
      // Measuring them cost the edge what no budget pays for: counted against the key's allowance.
      this.hostileInput.recordRefusal(principal.keyId);
      return this.refuse(principal, startedAt, exposedName, argumentsRefused);
    }
    // The organisation's catalog, policies and price book are nearly always cached: read without a
    // promise (each one waited for is a turn of the microtask queue), unless the step makes a span.
    const untraced = !spansMade();
    const catalog = this.catalog.cachedCatalog(principal.orgId) ?? (await this.catalog.catalogFor(principal.orgId));

    // Policy
    const tool = catalog.byExposedName.get(exposedName);
    if (!tool)
      return this.refuse(principal, startedAt, exposedName, unknownToolResult(exposedName, catalog.disabledNamespaces));
    const levels =
      (untraced && this.policies.cachedLevelsFor(principal)) ||
      (await inSpan('tollgate.policy', NO_ATTRIBUTES, () => this.policies.levelsFor(principal)));
    const decision = decideAccess(levels, { namespace: tool.namespace, tool: tool.name });
    if (!decision.allowed)
      return this.refuse(principal, startedAt, exposedName, notAllowedResult(exposedName, decision), tool);
    // A 2025-11-25 task-augmented call (params.task) of a tool that lists no task support
    // (execution.taskSupport forbidden, the default): refused before any work, answered -32601.
    if (currentCallRelay()?.task !== undefined && !toolTakesTasks(tool))
      return this.refuse(principal, startedAt, exposedName, taskNotSupportedResult(tool), tool);
    const outputLimits = effectiveOutputLimits(levels);

    // Arguments: checked against the pinned (approved) input schema, the contract with the upstream
    const schemaRefused = argumentSchemaResult(tool, args);
    if (schemaRefused) return this.refuse(principal, startedAt, exposedName, schemaRefused, tool);

    // Price (from the in-memory price book)
    const callId = newCallId();
    const cachedRule = untraced
      ? this.pricing.cachedPriceFor(principal.orgId, tool.upstreamId, tool.name, new Date(startedAt))
      : undefined;
    const call =
      cachedRule !== undefined
        ? this.pricedWith(cachedRule ?? FREE_PRICE, tool, callId, startedAt, outputLimits.cap)
        : await inSpan('tollgate.pricing', NO_ATTRIBUTES, () =>
            this.priceCall(principal, tool, callId, startedAt, outputLimits.cap),
          );
    addToLogContext({ callId: call.callId });

    // A call its upstream may run as a task (the agent can poll one, and the tool's latest listing
    // says `execution.taskSupport` optional or required; the upstream decides) is reserved in
    // Redis, not against this edge's leases: whichever edge sees the task end settles it. It is
    // held like any call until it is one (TaskOpening.accept). A tool that lists no task support is
    // forbidden tasks (both revisions), so its calls keep the leases.
    const mayBecomeTask = agentTakesTasks() && toolTakesTasks(tool);

    // Rate limit and reserve the likely cost, in one round trip (or none, against this edge's leases)
    const admission = await inSpan(
      'tollgate.admission',
      NO_ATTRIBUTES,
      (span) => this.admitCall(principal, call, mayBecomeTask, span),
      LEAF_SPAN,
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
      return await this.pricedCall(principal, call, held, args, catalog, levels, outputLimits, signal, mayBecomeTask);
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

  private async priceCall(
    principal: Principal,
    tool: ServedTool,
    callId: string,
    startedAt: number,
    policyCap: number | null,
  ): Promise<PricedCall> {
    const rule =
      (await this.pricing.priceFor(principal.orgId, tool.upstreamId, tool.name, new Date(startedAt))) ?? FREE_PRICE;
    return this.pricedWith(rule, tool, callId, startedAt, policyCap);
  }

  private pricedWith(
    rule: PriceRuleData,
    tool: ServedTool,
    callId: string,
    startedAt: number,
    policyCap: number | null,
  ): PricedCall {
    // The tighter of the upstream's cap and the policy's; the deployment default when neither sets one.
    const toolCap = tool.outputTokenCap;
    const outputTokenCap =
      toolCap === null
        ? (policyCap ?? this.config.edge.defaultOutputTokenCap)
        : policyCap === null
          ? toolCap
          : Math.min(toolCap, policyCap);
    const reservedTokens = likelyOutputTokens(tool.outputTokensP99, outputTokenCap);
    return { callId, tool, rule, outputTokenCap, reservedTokens, topUp: null, startedAt };
  }

  /**
   * Reserves the call's likely cost (likelyOutputTokens). A hard budget that cannot cover it but
   * can cover the per-call price and some output gets the call fitted to what it has left: the
   * reservation pays for fewer tokens, and the answer delivers no more unless a top-up is admitted.
   */
  private async admitCall(
    principal: Principal,
    call: PricedCall,
    unleased: boolean,
    span: Span,
  ): Promise<CallAdmission> {
    const started = performance.now();
    let admission = await this.admitOnce(principal, call, unleased);
    if (!admission.ok && 'budgetExceeded' in admission) {
      const fits = outputTokensAffordable(call.rule, availableMicros(admission.budgetExceeded.exceeded));
      if (fits !== null && fits >= 1 && fits < call.reservedTokens) {
        call.reservedTokens = fits;
        admission = await this.admitOnce(principal, call, unleased);
      }
    }
    const path = admission.ok && admission.hold.leased ? 'lease' : 'redis';
    span.setAttribute('tollgate.admission.path', path);
    this.metrics.recordAdmission(path, performance.now() - started);
    return admission;
  }

  private admitOnce(principal: Principal, call: PricedCall, unleased: boolean): Promise<CallAdmission> {
    return this.admission.admit(
      callerOf(principal),
      { namespace: call.tool.namespace, tool: call.tool.name },
      call.callId,
      estimateCallCost(call.rule, call.reservedTokens),
      call.startedAt,
      { unleased },
    );
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
    mayBecomeTask: boolean,
  ): Promise<CallToolResult> {
    const tool = call.tool;
    const exposedName = tool.exposedName;
    // A 2025-11-25 agent's params.task, read once: the call's relay does not change while it runs.
    const askedTask = currentCallRelay()?.task;

    // Upstream
    let result: CallToolResult;
    const upstreamStart = Date.now();
    try {
      const upstream = upstreamOf(catalog, tool);
      // Asked as a task in the upstream's own revision, whichever revision the agent asked in.
      const taskRelay = mayBecomeTask ? this.tasks.askingRelay() : null;
      const called = await inSpan(
        `tools/call ${tool.name}`,
        upstreamSpanAttributes(tool.name, tool.namespace),
        () => {
          // Made inside the client span: with telemetry on, the upstream gets that span's context.
          const propagation = upstreamPropagation();
          const callUpstream = () => this.upstreams.callTool(principal, upstream, tool.name, args, signal, propagation);
          return taskRelay ? runWithCallRelay(taskRelay, callUpstream) : callUpstream();
        },
        CLIENT_SPAN,
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
      // A 2025-11-25 upstream's CreateTaskResult (`{ task }`, asked with params.task) in the one shape
      // kept inside; also of a tool that lists no task support (TaskOpening.accept then refuses it, if leased).
      const sessionTask = taskRelay || askedTask ? flatCreatedTask(result) : null;
      if (sessionTask) result = sessionTask as unknown as CallToolResult;
      const task = isCreatedTask(result);
      // A task nobody can poll or settle elsewhere is a failed call (charged as one), never a free one.
      if (task) await this.tasks.accept(principal, upstream, call, held, result);
      const outcome = result.isError ? 'tool_error' : 'ok';
      this.metrics.recordUpstreamCall(tool.namespace, tool.name, Date.now() - upstreamStart, outcome);
      // The upstream runs the call as a task: it stays reserved until the task ends (TaskSettler).
      if (task) return await this.tasks.open(principal, upstream, call, held, result, sessionTask !== null);
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
        return cancelledResult(exposedName, callMeta(call, cost, 0, this.clock.now()), standings);
      }
      if (!(err instanceof UpstreamException)) throw err;
      const cost = failedCallCost(call);
      const standings = await this.settleAndMeter(principal, call, held, 'UPSTREAM_ERROR', cost, 0);
      return upstreamFailureResult(exposedName, err, callMeta(call, cost, 0, this.clock.now()), standings);
    }

    try {
      const answered = await this.answerResult(principal, call, held, result, levels, outputLimits);
      // A 2025-11-25 agent asked for a task (params.task) and the upstream answered at once.
      return askedTask ? await this.tasks.openCompleted(principal, call, askedTask, answered) : answered;
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

  /**
   * The agent's answer to a result the upstream gave (at once, or as a task's: TaskSettler): its
   * embedded resources decided, within the output budget, settled and metered.
   */
  async answerResult(
    principal: Principal,
    call: PricedCall,
    held: CallHold,
    upstreamResult: CallToolResult,
    levels: readonly ItemPolicyLevel[],
    outputLimits: OutputLimits,
  ): Promise<CallToolResult> {
    const exposedName = call.tool.exposedName;
    // Resources embedded or linked in the result are decided by the resource policy, like a read
    // (the common answer carries none: no promise to wait for).
    const blocks = upstreamResult.content ?? [];
    const content = carriesResources(blocks)
      ? await this.embeddedResources.withholdDenied(principal, call.tool.namespace, blocks, levels)
      : blocks;
    let result = content !== upstreamResult.content ? { ...upstreamResult, content } : upstreamResult;
    let outputTokens = countJsonTokens(result.content, this.tokenEncoding);
    // Output beyond what the reservation paid for is admitted now, like a page read; refused (a hard
    // budget cannot cover it), the answer delivers what the reservation paid for.
    const topUp = outputTopUp(call.rule, call.reservedTokens, outputTokens, call.outputTokenCap);
    // No top-up needed (the result fits the reservation, or output is not priced): the cap, without a promise.
    const deliverable = topUp ? await this.deliverableWithTopUp(principal, call, topUp) : call.outputTokenCap;
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
        callMeta(call, cost, 0, this.clock.now()),
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
        [CALL_META_KEY]: callMeta(call, cost, outputTokens, this.clock.now()),
        [BUDGET_META_KEY]: budgetMeta(standings),
      },
    };
  }

  /**
   * Output tokens this answer may deliver when the result is over what the reservation paid for
   * (and the rule prices output): that plus a top-up admitted against the budgets for the rest up
   * to the cap, or only what the reservation paid for if refused.
   */
  private async deliverableWithTopUp(
    principal: Principal,
    call: PricedCall,
    topUp: { tokens: number; micros: Micros },
  ): Promise<number> {
    // Charged already (TaskSettler): what the reservation paid for, never output no one pays for.
    if (call.alreadyCharged) return call.reservedTokens;
    const more = await this.admission.admit(callerOf(principal), null, newCallId(), topUp.micros, this.clock.now());
    if (!more.ok) return call.reservedTokens;
    call.topUp = more.hold;
    return call.reservedTokens + topUp.tokens;
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
    const latencyMs = this.clock.now() - call.startedAt;
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
    const split = topUp ? splitSettlement(cost, held.estimate) : null;
    const standings = await inSpan(
      'tollgate.completion',
      OUTCOME_ATTRIBUTES[outcome],
      () => {
        const entry = this.metering.outboxEntry(event);
        // Without a top-up (most calls) its own promise, not a Promise.all of one.
        if (!split) return this.admission.complete(held, cost, entry);
        const completed = this.admission.complete(held, split.reservation, entry);
        return Promise.all([completed, this.admission.complete(topUp!, split.topUp, null)]).then(([s]) => s);
      },
      LEAF_SPAN,
    );
    const upstream = call.tool.namespace ?? parseExposedToolName(call.tool.exposedName)?.namespace ?? '';
    this.metrics.recordCall(call.tool.exposedName, upstream, outcome, latencyMs, cost);
    if (this.accessLog.enabled)
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
    const latencyMs = this.clock.now() - startedAt;
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
    if (this.accessLog.enabled)
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

  // Beside the call: a page of a paged result, and the tools a caller may list.

  /**
   * `tollgate__read_result_page`: a page read is governed like a call. Its page's tokens at the
   * original call's per-output-token price are admitted against the budgets (no rate limits: the
   * upstream is not called again), settled and metered as a usage event of the same tool and rule
   * (its own id; `resultOf` in its `_meta` names the call), so the ledger holds what was delivered.
   */
  async readResultPage(principal: Principal, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
    const startedAt = this.clock.now();
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
    let standings: BudgetStanding[];
    try {
      standings = await this.settleAndMeter(principal, read, admission.hold, 'OK', cost, page.tokens);
    } finally {
      // Settled, or freed uncharged: the edge renews a hold until one of the two.
      this.admission.release(admission.hold);
    }
    return this.pager.answerWithPage(page, {
      [CALL_META_KEY]: { ...callMeta(read, cost, page.tokens, this.clock.now()), resultOf: origin.callId },
      [BUDGET_META_KEY]: budgetMeta(standings),
    });
  }

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

  private get tokenEncoding(): TokenEncodingName {
    return this.config.tokens.encoding;
  }
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

/** `now`: the edge's clock when the answer is sent (the call's latency runs from its start on it). */
export function callMeta(call: MeteredCall, cost: Micros, outputTokens: number, now: number): CallMeta {
  return {
    callId: call.callId,
    tool: call.tool.exposedName,
    costMicros: microsToJson(cost),
    outputTokens,
    latencyMs: now - call.startedAt,
  };
}

/** A cost the tool reported in `_meta["tollgate/cost"].costMicros`; honoured only where the price rule allows. */
function reportedCost(result: CallToolResult): Micros | null {
  const reported = (result._meta?.['tollgate/cost'] as { costMicros?: unknown } | undefined)?.costMicros;
  return typeof reported === 'number' && Number.isSafeInteger(reported) ? BigInt(reported) : null;
}
