import { currentLogContext } from '@tollgate/observability';
import { Inject, Injectable } from '@nestjs/common';
import type { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { CallToolResult, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AdmissionException, AdmissionExceptionCode, CallAdmissionService } from '@tollgate/admission';
import { BudgetStanding } from '@tollgate/budget';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Principal } from '@tollgate/identity';
import { CLOCK, Clock, Micros } from '@tollgate/kernel';
import { RefusalRecorder, newCallId } from '@tollgate/usage';
import {
  GovernedItemKind,
  ItemPolicyLevel,
  PolicyService,
  ResourceDecision,
  decideItemAccess,
  decideResourceAccess,
  describeResourceDecision,
  effectiveOutputLimits,
  StoredPolicy,
} from '@tollgate/policy';
import {
  FREE_PRICE,
  PriceRuleData,
  PricingService,
  actualCallCost,
  estimateCallCost,
  pricedItemName,
} from '@tollgate/pricing';
import { UpstreamException, UpstreamSpec } from '@tollgate/mcp-client';
import { EdgeMetrics } from '../health/edge-metrics.service';
import { BUDGET_META_KEY, CALL_META_KEY, budgetMeta } from './call-meta';
import {
  admissionRefusedResult,
  authRequiredResult,
  notRecordedResult,
  refusingBudgetOf,
  upstreamFailureResult,
} from './call-refusals';
import { GovernedCallPipeline, MeteredCall, callMeta, callerOf } from './governed-call.pipeline';
import { ResultPager } from './result-pager.service';
import { ERROR_META_KEY, TOLLGATE_REFUSAL_ERROR, ToolErrorBody, toolErrorOf } from './tool-error';
import { UpstreamCaller, UpstreamOutcome } from './upstream-caller.service';

/** A resource read or a prompt get of one upstream, as the policy, price book and ledger name it. */
export interface GovernedItem {
  kind: Exclude<GovernedItemKind, 'tool'>;
  spec: UpstreamSpec;
  /** The URI (or prompt name) at the upstream: what policies and price rules match. */
  key: string;
  /** What the agent asked for. */
  exposed: string;
  /** The upstream's own output token cap (null: none); the tighter of it and the policy's applies. */
  outputTokenCap: number | null;
  /**
   * Priced and metered as a completion of the prompt or template, or a subscription to the
   * resource (`completion:<key>`, `subscription:<key>`), rather than a read or get; the policy of
   * `kind` decides it all the same.
   */
  meteredAs?: 'completion' | 'subscription';
}

/** What the upstream answered, and how much of the agent's context it takes. */
export interface ItemAnswer<R> {
  result: R;
  /** The text of a single-text answer that may be paged when it is over the output cap, else null. */
  pageableText: string | null;
  tokens: number;
}

type ItemResult = { _meta?: Record<string, unknown> };

/**
 * Resource reads, prompt gets, completions and resource subscriptions, governed like tool calls
 * and through the same steps: policy (the policy's resource or prompt lists) -> price
 * (`resource:<uri>` / `prompt:<name>` / `completion:<key>` / `subscription:<uri>` rules)
 * -> reserve (budgets; rate-limit rules are tool patterns and do not apply) -> upstream -> output
 * budget (a large text read is paged) -> settle and meter (GovernedCallPipeline.settleAndMeter).
 */
@Injectable()
export class GovernedItemPipeline {
  constructor(
    private readonly calls: GovernedCallPipeline,
    private readonly policies: PolicyService,
    private readonly pricing: PricingService,
    private readonly admission: CallAdmissionService,
    private readonly upstreams: UpstreamCaller,
    private readonly pager: ResultPager,
    private readonly metrics: EdgeMetrics,
    private readonly refusals: RefusalRecorder,
    @Inject(TOLLGATE_CONFIG) private readonly config: EdgeConfig,
    // The time a call is admitted, recorded and timed at (a rate-limit window, a budget period).
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Whether the caller's policies allow the item (for lists, completions and subscriptions). */
  async allowed(principal: Principal, kind: GovernedItem['kind'], namespace: string, key: string): Promise<boolean> {
    return this.decide(await this.policies.levelsFor(principal), kind, namespace, key).allowed;
  }

  // A resource is decided on its normalised URI (what the upstream will read), a prompt on its name.
  private decide(
    levels: readonly ItemPolicyLevel[],
    kind: GovernedItem['kind'],
    namespace: string,
    key: string,
  ): ResourceDecision {
    return kind === 'resource'
      ? decideResourceAccess(levels, namespace, key)
      : decideItemAccess(levels, kind, { namespace, tool: key });
  }

  /**
   * Refuses with the rule (or missing allow list) unless the caller may use the item; answers the
   * policy levels it decided on (run reads the output limits from the same ones).
   */
  async assertAllowed(
    principal: Principal,
    item: Pick<GovernedItem, 'kind' | 'spec' | 'key' | 'exposed' | 'meteredAs'>,
  ): Promise<StoredPolicy[]> {
    const startedAt = this.clock.now();
    const levels = await this.policies.levelsFor(principal);
    const decision = this.decide(levels, item.kind, item.spec.namespace, item.key);
    if (decision.allowed) return levels;
    const what = item.kind === 'resource' ? 'Reading resource' : 'Getting prompt';
    const code = item.kind === 'resource' ? 'RESOURCE_NOT_ALLOWED' : 'PROMPT_NOT_ALLOWED';
    this.recordRefusal(principal, item, code, startedAt);
    throw this.refusal(item.exposed, {
      code,
      message: `${what} "${item.exposed}" is not allowed for this key: ${describeResourceDecision(decision, item.kind)}.`,
      hint: `Use one of the ${item.kind}s listed for this key, or ask an administrator to allow this ${item.kind}.`,
      [item.kind === 'resource' ? 'uri' : 'prompt']: item.exposed,
      upstream: item.spec.namespace,
      reason: decision.reason,
      ...('scope' in decision ? { scope: decision.scope } : {}),
      ...('rule' in decision ? { rule: decision.rule } : {}),
    });
  }

  /**
   * Runs one read or get: `send` asks the upstream, `measure` says how large the answer is and
   * whether it can be paged, `withPage` makes the answer that carries only the first page.
   */
  async run<R extends ItemResult>(
    principal: Principal,
    item: GovernedItem,
    send: (upstreams: UpstreamCaller) => Promise<UpstreamOutcome<R>>,
    measure: (result: R) => ItemAnswer<R>,
    withPage: (result: R, page: CallToolResult) => R,
  ): Promise<R> {
    const startedAt = this.clock.now();
    // Policy
    const levels = await this.assertAllowed(principal, item);
    const limits = effectiveOutputLimits(levels);

    // Price
    const meteredName = meteredNameOf(item);
    const rule =
      (await this.pricing.priceFor(principal.orgId, item.spec.id, meteredName, new Date(startedAt))) ?? FREE_PRICE;
    const caps = [item.outputTokenCap, limits.cap].filter((c): c is number => c !== null);
    const outputTokenCap = caps.length ? Math.min(...caps) : this.config.edge.defaultOutputTokenCap;
    const call: MeteredCall = {
      callId: newCallId(),
      tool: { exposedName: item.exposed, upstreamId: item.spec.id, name: meteredName },
      rule,
      startedAt,
    };

    // Reserve (budgets only: no rate-limit rule names a resource or prompt)
    const admitted = await this.admission.admit(
      callerOf(principal),
      null,
      call.callId,
      estimateCallCost(rule, outputTokenCap),
      startedAt,
    );
    if (!admitted.ok) {
      const refused = admissionRefusedResult(item.exposed, admitted);
      this.recordRefusal(principal, item, toolErrorOf(refused)!.code, startedAt, refusingBudgetOf(admitted));
      throw this.refusalOf(item.exposed, refused);
    }
    const held = admitted.hold;
    try {
      // Upstream
      let outcome: UpstreamOutcome<R>;
      try {
        outcome = await send(this.upstreams);
      } catch (err) {
        if (err instanceof McpError) {
          // The upstream answered with an error (not found, invalid params): relayed as is, a failed read.
          await this.settleFailed(principal, call, held, rule, outputTokenCap);
          throw err;
        }
        if (!(err instanceof UpstreamException)) throw err;
        const cost = actualCallCost(rule, { failed: true, outputTokens: 0, reportedCostMicros: null }, outputTokenCap);
        const standings = await this.calls.settleAndMeter(principal, call, held, 'UPSTREAM_ERROR', cost, 0);
        throw this.refusalOf(
          item.exposed,
          upstreamFailureResult(item.exposed, err, callMeta(call, cost, 0, this.clock.now()), standings),
        );
      }
      if (!outcome.ok) throw this.refusalOf(item.exposed, authRequiredResult(item.exposed, outcome.authRequired));

      // Output budget: a single text read over the cap is paged; anything else over it is refused
      const answer = measure(outcome.result);
      let result = answer.result;
      let tokens = answer.tokens;
      if (tokens > outputTokenCap) {
        if (answer.pageableText === null || limits.overflow !== 'PAGE') {
          const cost = actualCallCost(
            rule,
            { failed: true, outputTokens: 0, reportedCostMicros: null },
            outputTokenCap,
          );
          const standings = await this.calls.settleAndMeter(principal, call, held, 'TOOL_ERROR', cost, 0);
          throw this.refusal(item.exposed, {
            code: 'OUTPUT_BUDGET_EXCEEDED',
            message: `"${item.exposed}" is ${tokens} tokens, over the cap of ${outputTokenCap}.`,
            hint:
              answer.pageableText === null
                ? 'It is not a single text, so it cannot be paged: read a smaller resource.'
                : 'Paging is off for this key (outputOverflow REFUSE): read a smaller resource.',
            outputTokens: tokens,
            outputTokenCap,
            charged: cost > 0n,
            [CALL_META_KEY]: callMeta(call, cost, 0, this.clock.now()),
            [BUDGET_META_KEY]: budgetMeta(standings),
          });
        }
        const origin = {
          callId: call.callId,
          exposedName: item.exposed,
          upstreamId: item.spec.id,
          toolName: meteredName,
          priceRuleId: rule.id,
          perOutputTokenMicros: rule.perOutputTokenMicros.toString(),
        };
        const paged = await this.pager.pageResult(
          principal,
          origin,
          { content: [{ type: 'text', text: answer.pageableText }] },
          outputTokenCap,
        );
        result = withPage(result, paged.result);
        tokens = paged.deliveredTokens;
      }

      // Settle and meter
      const cost = actualCallCost(
        rule,
        { failed: false, outputTokens: tokens, reportedCostMicros: null },
        outputTokenCap,
      );
      const standings = await this.calls.settleAndMeter(principal, call, held, 'OK', cost, tokens);
      return {
        ...result,
        _meta: {
          ...(result._meta ?? {}),
          [CALL_META_KEY]: callMeta(call, cost, tokens, this.clock.now()),
          [BUDGET_META_KEY]: budgetMeta(standings),
        },
      };
    } catch (err) {
      if (err instanceof AdmissionException && err.code === AdmissionExceptionCode.CompletionNotRecorded)
        throw this.refusalOf(item.exposed, notRecordedResult(item.exposed, call.callId));
      throw err;
    } finally {
      // Every path that reached the upstream settled; any other way out frees the reservation, uncharged.
      this.admission.release(held);
    }
  }

  /**
   * A request that is relayed, not metered (subscriptions, completions): the caller checks the
   * policy first; an upstream failure or a missing user connection is refused like a read.
   */
  async relay<S extends AnySchema>(
    principal: Principal,
    spec: UpstreamSpec,
    request: { method: string; params?: Record<string, unknown> },
    schema: S,
    signal?: AbortSignal,
  ): Promise<SchemaOutput<S>> {
    const name = String(
      request.params?.uri ??
        (request.params?.ref as { name?: string; uri?: string } | undefined)?.name ??
        request.method,
    );
    let outcome: UpstreamOutcome<SchemaOutput<S>>;
    try {
      outcome = await this.upstreams.request(principal, spec, request, schema, signal);
    } catch (err) {
      if (!(err instanceof UpstreamException)) throw err;
      throw this.refusalOf(
        name,
        upstreamFailureResult(name, err, { callId: '', tool: name, costMicros: 0, outputTokens: 0, latencyMs: 0 }, []),
      );
    }
    if (!outcome.ok) throw this.refusalOf(name, authRequiredResult(name, outcome.authRequired));
    return outcome.result;
  }

  private async settleFailed(
    principal: Principal,
    call: MeteredCall,
    held: Parameters<GovernedCallPipeline['settleAndMeter']>[2],
    rule: PriceRuleData,
    cap: number,
  ): Promise<BudgetStanding[]> {
    const cost: Micros = actualCallCost(rule, { failed: true, outputTokens: 0, reportedCostMicros: null }, cap);
    return this.calls.settleAndMeter(principal, call, held, 'TOOL_ERROR', cost, 0);
  }

  /**
   * A read or get refused before the upstream (policy, budget): recorded like a refused tool call
   * (fire and forget) for the refusal reports and the per-call log, under its metered name
   * (`resource:<uri>`, `prompt:<name>`) as the ledger names the calls that went through.
   */
  private recordRefusal(
    principal: Principal,
    item: Pick<GovernedItem, 'kind' | 'spec' | 'key' | 'meteredAs'>,
    code: string,
    startedAt: number,
    budgetId: string | null = null,
  ): void {
    this.refusals.record({
      orgId: principal.orgId,
      teamId: principal.teamId,
      userId: principal.userId,
      keyId: principal.keyId,
      upstreamId: item.spec.id,
      toolName: meteredNameOf(item),
      code,
      budgetId,
      latencyMs: this.clock.now() - startedAt,
      occurredAt: new Date(startedAt),
    });
  }

  /** The refusal a tool call would get, as a JSON-RPC error carrying the same body (and its `_meta`). */
  private refusalOf(name: string, result: CallToolResult): McpError {
    const { [ERROR_META_KEY]: body, ...meta } = (result._meta ?? {}) as Record<string, unknown>;
    return this.refusal(name, { ...(body as ToolErrorBody), ...meta });
  }

  private refusal(name: string, body: Record<string, unknown> & { code: string; message: string }): McpError {
    // The org of the request being served (the log context holds it once the key is authenticated).
    this.metrics.recordRefusal(name, body.code, currentLogContext()?.orgId ?? 'unknown');
    return new McpError(TOLLGATE_REFUSAL_ERROR, body.message, body);
  }
}

/** What an item is priced and metered under: `resource:`, `prompt:`, `completion:` or `subscription:<key>`. */
function meteredNameOf(item: Pick<GovernedItem, 'kind' | 'key' | 'meteredAs'>): string {
  return pricedItemName(item.meteredAs ?? item.kind, item.key);
}
