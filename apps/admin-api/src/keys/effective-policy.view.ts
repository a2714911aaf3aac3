import { ApiProperty } from '@nestjs/swagger';
import { KeyView, toKeyView } from './key.view';
import type { EffectivePolicy, EffectiveTool } from './effective-policy.service';
import { DISCLOSURE_MODES, microsToJson, SERVED_DISCLOSURE_MODES } from '@tollgate/kernel';

const SCOPES = ['ORG', 'TEAM', 'USER', 'KEY'];

/** The price rule in force now; money as JSON integers of micro-units. */
export class EffectivePriceView {
  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'null: no rule matches, the call is free (still metered)',
  })
  ruleId!: string | null;
  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'The rule’s upstream; null for an org-wide rule',
  })
  upstreamId!: string | null;
  @ApiProperty() toolPattern!: string;
  @ApiProperty({ type: 'integer' }) perCallMicros!: number;
  @ApiProperty({ type: 'integer' }) perOutputTokenMicros!: number;
  @ApiProperty() acceptReportedCost!: boolean;
  @ApiProperty({ type: 'integer', description: 'Most a tool-reported cost can add (0 unless acceptReportedCost)' })
  reportedCostCapMicros!: number;
  @ApiProperty() chargeFailedCalls!: boolean;
  @ApiProperty({ nullable: true, type: Date }) effectiveFrom!: Date | null;
}

export class EffectiveRateLimitView {
  @ApiProperty({ format: 'uuid' }) ruleId!: string;
  @ApiProperty({ enum: SCOPES }) scope!: string;
  @ApiProperty({ format: 'uuid' }) scopeId!: string;
  @ApiProperty() toolPattern!: string;
  @ApiProperty({ nullable: true, type: 'integer' }) callsPerWindow!: number | null;
  @ApiProperty({ type: 'integer' }) windowSeconds!: number;
  @ApiProperty({ nullable: true, type: 'integer' }) maxConcurrent!: number | null;
}

export class ToolRefusalView {
  @ApiProperty({ enum: ['DENIED_BY_RULE', 'NOT_IN_ALLOW_LIST', 'NO_ALLOW_LIST', 'KEY_REVOKED', 'KEY_EXPIRED'] })
  reason!: string;
  @ApiProperty({
    enum: SCOPES,
    nullable: true,
    type: String,
    description: 'The policy level that refused (deny rule, or allow list that leaves the tool out)',
  })
  scope!: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) scopeId!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The deny pattern that matched (DENIED_BY_RULE)' }) rule!:
    string | null;
  @ApiProperty() message!: string;
}

export class EffectiveToolView {
  @ApiProperty({ example: 'github__search_issues' }) exposedName!: string;
  @ApiProperty() namespace!: string;
  @ApiProperty() tool!: string;
  @ApiProperty({ format: 'uuid' }) upstreamId!: string;
  @ApiProperty({ description: 'Listed to the key’s agent' }) visible!: boolean;
  @ApiProperty({ description: 'Callable by the key’s agent' }) callable!: boolean;
  @ApiProperty({ description: 'An autoExecute pattern of some level matches' }) autoExecute!: boolean;
  @ApiProperty({ type: EffectivePriceView, nullable: true, description: 'Allowed tools: the price in force now' })
  price!: EffectivePriceView | null;
  @ApiProperty({
    nullable: true,
    type: 'integer',
    description: 'The upstream’s output token cap; null: the edge default',
  })
  outputTokenCap!: number | null;
  @ApiProperty({
    type: [EffectiveRateLimitView],
    description: 'Allowed tools: every rate limit the call counts against',
  })
  rateLimits!: EffectiveRateLimitView[];
  @ApiProperty({ type: ToolRefusalView, nullable: true, description: 'Refused tools: why, and the rule that refused' })
  refusal!: ToolRefusalView | null;
}

export class BudgetStandingView {
  @ApiProperty({ format: 'uuid' }) budgetId!: string;
  @ApiProperty({ enum: SCOPES }) scope!: string;
  @ApiProperty({ format: 'uuid' }) scopeId!: string;
  @ApiProperty({ enum: ['DAY', 'WEEK', 'MONTH', 'QUARTER', 'TOTAL'] }) period!: string;
  @ApiProperty({ enum: ['HARD', 'SOFT'] }) mode!: string;
  @ApiProperty({ type: 'integer' }) limitMicros!: number;
  @ApiProperty({ type: 'integer' }) spentMicros!: number;
  @ApiProperty({ type: 'integer', description: 'Held by calls in flight' }) reservedMicros!: number;
  @ApiProperty({
    type: 'integer',
    description:
      'Allowance edges hold as leases for calls they admit without a round trip to Redis; unused, it goes back within seconds',
  })
  leasedMicros!: number;
  @ApiProperty({ type: 'integer', description: 'limit − spent − reserved, never below 0' }) remainingMicros!: number;
  @ApiProperty() periodStart!: Date;
  @ApiProperty({ nullable: true, type: Date, description: 'null for a TOTAL budget' }) resetsAt!: Date | null;
}

export class PolicyLevelView {
  @ApiProperty({ enum: SCOPES }) scope!: string;
  @ApiProperty({ format: 'uuid' }) scopeId!: string;
  @ApiProperty({ type: [String] }) allow!: string[];
  @ApiProperty({ type: [String] }) deny!: string[];
  @ApiProperty({ type: [String] }) autoExecute!: string[];
}

export class DisclosureSummaryView {
  @ApiProperty({
    enum: DISCLOSURE_MODES,
    nullable: true,
    type: String,
    description: 'The key’s own setting',
  })
  keyMode!: string | null;
  @ApiProperty({
    enum: DISCLOSURE_MODES,
    description: 'The key’s own mode, else the most specific policy’s, else AUTO',
  })
  requestedMode!: string;
  @ApiProperty({
    enum: SERVED_DISCLOSURE_MODES,
    description: 'What the agent gets (AUTO resolved by catalog size)',
  })
  mode!: string;
}

export class EffectivePolicyView {
  @ApiProperty({ type: KeyView }) key!: KeyView;
  @ApiProperty({ enum: ['ACTIVE', 'REVOKED', 'EXPIRED'] }) keyStatus!: string;
  @ApiProperty() evaluatedAt!: Date;
  @ApiProperty({ type: DisclosureSummaryView }) disclosure!: DisclosureSummaryView;
  @ApiProperty({
    type: [PolicyLevelView],
    description: 'The policy levels that apply to the key (levels without a policy omitted)',
  })
  policies!: PolicyLevelView[];
  @ApiProperty({ type: 'integer' }) allowedTools!: number;
  @ApiProperty({ type: 'integer' }) refusedTools!: number;
  @ApiProperty({ type: [EffectiveToolView], description: 'Every tool of the served catalog, by exposed name' })
  tools!: EffectiveToolView[];
  @ApiProperty({ type: [BudgetStandingView], description: 'Key, user, team and org budgets for their current periods' })
  budgets!: BudgetStandingView[];
}

function toToolView(t: EffectiveTool): EffectiveToolView {
  const rule = t.price?.rule;
  return {
    exposedName: t.exposedName,
    namespace: t.namespace,
    tool: t.tool,
    upstreamId: t.upstreamId,
    visible: t.visible,
    callable: t.callable,
    autoExecute: t.autoExecute,
    price:
      rule && t.price
        ? {
            ruleId: t.price.isDefault ? null : rule.id,
            upstreamId: rule.upstreamId,
            toolPattern: rule.toolPattern,
            perCallMicros: microsToJson(rule.perCallMicros),
            perOutputTokenMicros: microsToJson(rule.perOutputTokenMicros),
            acceptReportedCost: rule.acceptReportedCost,
            reportedCostCapMicros: microsToJson(rule.acceptReportedCost ? rule.reportedCostCapMicros : 0n),
            chargeFailedCalls: rule.chargeFailedCalls,
            effectiveFrom: t.price.isDefault ? null : rule.effectiveFrom,
          }
        : null,
    outputTokenCap: t.outputTokenCap,
    rateLimits: t.rateLimits.map((r) => ({
      ruleId: r.id,
      scope: r.scope,
      scopeId: r.scopeId,
      toolPattern: r.toolPattern,
      callsPerWindow: r.callsPerWindow,
      windowSeconds: r.windowSeconds,
      maxConcurrent: r.maxConcurrent,
    })),
    refusal: t.refusal ? { ...t.refusal } : null,
  };
}

export function toEffectivePolicyView(p: EffectivePolicy): EffectivePolicyView {
  const tools = p.tools.map(toToolView);
  const allowed = tools.filter((t) => t.callable).length;
  return {
    key: toKeyView(p.key),
    keyStatus: p.keyStatus,
    evaluatedAt: p.evaluatedAt,
    disclosure: p.disclosure,
    policies: p.levels.map((l) => ({
      scope: l.scope,
      scopeId: l.scopeId,
      allow: [...l.allow],
      deny: [...l.deny],
      autoExecute: [...l.autoExecute],
    })),
    allowedTools: allowed,
    refusedTools: tools.length - allowed,
    tools,
    budgets: p.budgets.map((b) => ({
      budgetId: b.budgetId,
      scope: b.scope,
      scopeId: b.scopeId,
      period: b.period,
      mode: b.mode,
      limitMicros: microsToJson(b.limitMicros),
      spentMicros: microsToJson(b.spentMicros),
      reservedMicros: microsToJson(b.reservedMicros),
      leasedMicros: microsToJson(b.leasedMicros),
      remainingMicros: microsToJson(b.remainingMicros),
      periodStart: b.periodStart,
      resetsAt: b.resetsAt,
    })),
  };
}
