import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallAdmission } from '@tollgate/admission';
import { availableMicros, BudgetStanding } from '@tollgate/budget';
import { ServedTool } from '@tollgate/upstream-registry';
import { Micros, microsToJson, parseExposedToolName } from '@tollgate/kernel';
import { AccessDecision, describeDecision } from '@tollgate/policy';
import { PriceRuleData, outputTokensAffordable } from '@tollgate/pricing';
import { RateLimitRule } from '@tollgate/rate-limit';
import { UpstreamException, UpstreamExceptionCode } from '@tollgate/mcp-client';
import { ARGUMENT_LIMITS, checkArguments, describeArgumentCheck } from './argument-limits';
import { checkArgumentSchema } from './argument-schema';
import { BUDGET_META_KEY, CALL_META_KEY, CallMeta, budgetMeta } from './call-meta';
import { ToolErrorCode, toolErrorResult } from './tool-error';
import { AuthRequired } from './upstream-caller.service';

/*
 * What the agent is told when a governed call is refused or fails, one builder per answer: a tool
 * result with `isError: true` and a structured body (`code`, `message`, `hint`, and the numbers
 * that explain it). The governed call (governed-call.pipeline.ts) decides when; this says what.
 */

/** The output a call's reservation pays for, as a budget refusal explains it. */
export interface ReservedOutput {
  rule: PriceRuleData;
  reservedTokens: number;
  outputTokenCap: number;
}

/** The budget that refused an admission, for the refusal's record (budgets "blocking now"). */
export function refusingBudgetOf(refused: Exclude<CallAdmission, { ok: true }>): string | null {
  return 'budgetExceeded' in refused ? refused.budgetExceeded.exceeded.budgetId : null;
}

/** INVALID_ARGUMENTS when the call's arguments exceed a limit of ARGUMENT_LIMITS, else null. */
export function argumentLimitsResult(name: string, args: Record<string, unknown> | undefined): CallToolResult | null {
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
export function argumentSchemaResult(
  tool: ServedTool,
  args: Record<string, unknown> | undefined,
): CallToolResult | null {
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

export function unknownToolResult(name: string, disabledNamespaces: ReadonlySet<string>): CallToolResult {
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

/**
 * A 2025-11-25 agent asked for a task (`params.task`) of a tool whose latest listing gives no task
 * support (`execution.taskSupport` forbidden, or nothing, which reads as forbidden). Refused before
 * price, admission or the upstream; the SDK transport answers it as the revision's -32601.
 */
export function taskNotSupportedResult(tool: ServedTool): CallToolResult {
  return toolErrorResult({
    code: ToolErrorCode.TaskNotSupported,
    message: `Tool ${tool.exposedName} does not support task-augmented execution (taskSupport: ${tool.taskSupport ?? 'forbidden'}).`,
    hint: 'Call the tool without params.task: its server runs it only as a plain call. Nothing was charged.',
    tool: tool.exposedName,
    taskSupport: tool.taskSupport ?? 'forbidden',
    charged: false,
  });
}

export function notAllowedResult(name: string, decision: Exclude<AccessDecision, { allowed: true }>): CallToolResult {
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
  call?: ReservedOutput,
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
  call?: ReservedOutput,
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

export function cancelledResult(name: string, meta: CallMeta, standings: BudgetStanding[]): CallToolResult {
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

export function outputBudgetExceededResult(
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
