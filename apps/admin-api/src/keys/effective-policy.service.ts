import { Injectable } from '@nestjs/common';
import { BudgetService, BudgetStanding } from '@tollgate/budget';
import { ServedTool, ToolCatalogService } from '@tollgate/upstream-registry';
import { IdentityService, VirtualKeyView } from '@tollgate/identity';
import { budgetClock, firstMatchingPattern } from '@tollgate/kernel';
import {
  AccessDecision,
  PolicyScope,
  PolicyService,
  StoredPolicy,
  decideAccess,
  describeDecision,
} from '@tollgate/policy';
import { FREE_PRICE, PriceRuleData, PricingService } from '@tollgate/pricing';
import { RateLimitRule, RateLimitService } from '@tollgate/rate-limit';
import { KeyPreviewService } from './key-preview.service';

export type KeyStatus = 'ACTIVE' | 'REVOKED' | 'EXPIRED';

/** Why a tool is refused: the policy decision, or the key itself no longer working. */
export type ToolRefusal =
  | { reason: 'DENIED_BY_RULE'; scope: PolicyScope; scopeId: string; rule: string; message: string }
  | { reason: 'NOT_IN_ALLOW_LIST'; scope: PolicyScope; scopeId: string; rule: null; message: string }
  | { reason: 'NO_ALLOW_LIST'; scope: null; scopeId: null; rule: null; message: string }
  | { reason: 'KEY_REVOKED' | 'KEY_EXPIRED'; scope: null; scopeId: null; rule: null; message: string };

export interface EffectiveTool {
  exposedName: string;
  namespace: string;
  tool: string;
  upstreamId: string;
  /** Listed to the key's agent, and callable by it: the edge takes both from one access decision. */
  visible: boolean;
  callable: boolean;
  /** Some level's `autoExecute` pattern matches (clients that ask for confirmation may skip it). */
  autoExecute: boolean;
  /** The price rule in force now (allowed tools only); `ruleId` null means no rule matches: free, still metered. */
  price: EffectivePrice | null;
  /** The upstream's output token cap; null means the edge's DEFAULT_OUTPUT_TOKEN_CAP. */
  outputTokenCap: number | null;
  /** Every rate limit the edge would count this call against (allowed tools only). */
  rateLimits: RateLimitRule[];
  refusal: ToolRefusal | null;
}

export interface EffectivePrice {
  rule: PriceRuleData;
  isDefault: boolean;
}

export interface EffectivePolicy {
  key: VirtualKeyView;
  keyStatus: KeyStatus;
  evaluatedAt: Date;
  disclosure: { keyMode: string | null; requestedMode: string; mode: string };
  levels: StoredPolicy[];
  tools: EffectiveTool[];
  budgets: BudgetStanding[];
}

/**
 * What a key may do right now, tool by tool, computed with the edge's own code: the served
 * catalog, `decideAccess` over the same policy levels, the pricing service's `selectPriceRule`
 * and the rate-limit service's `rulesFor` (`matchesToolPattern`) over the same cached config,
 * and the budget service's standings for the current periods.
 */
@Injectable()
export class EffectivePolicyService {
  constructor(
    private readonly identity: IdentityService,
    private readonly catalogs: ToolCatalogService,
    private readonly policies: PolicyService,
    private readonly pricing: PricingService,
    private readonly rateLimits: RateLimitService,
    private readonly budgets: BudgetService,
    private readonly previews: KeyPreviewService,
  ) {}

  async effectivePolicy(orgId: string, keyId: string, now = new Date()): Promise<EffectivePolicy> {
    const key = await this.identity.getVirtualKey(orgId, keyId);
    const org = await this.identity.getOrganization(orgId);
    const ids = { orgId, teamId: key.teamId, userId: key.userId, keyId: key.id };
    const [catalog, levels, budgets, preview] = await Promise.all([
      this.catalogs.catalogFor(orgId),
      this.policies.levelsFor(ids),
      this.budgets.standingsFor(
        { ...ids, timeZone: budgetClock(org.timeZone, org.previousTimeZone, org.timeZoneChangedAt) },
        now,
      ),
      this.previews.previewKey(orgId, keyId),
    ]);
    const keyStatus: KeyStatus = key.revokedAt
      ? 'REVOKED'
      : key.expiresAt && key.expiresAt.getTime() <= now.getTime()
        ? 'EXPIRED'
        : 'ACTIVE';
    const tools: EffectiveTool[] = [];
    for (const t of catalog.tools) tools.push(await this.toolFor(t, levels, ids, keyStatus, now));
    return {
      key,
      keyStatus,
      evaluatedAt: now,
      disclosure: { keyMode: key.disclosureMode, requestedMode: preview.requestedMode, mode: preview.mode },
      levels,
      tools,
      budgets,
    };
  }

  private async toolFor(
    t: ServedTool,
    levels: StoredPolicy[],
    ids: { orgId: string; teamId: string; userId: string; keyId: string },
    keyStatus: KeyStatus,
    now: Date,
  ): Promise<EffectiveTool> {
    const ref = { namespace: t.namespace, tool: t.name };
    const base = {
      exposedName: t.exposedName,
      namespace: t.namespace,
      tool: t.name,
      upstreamId: t.upstreamId,
      outputTokenCap: t.outputTokenCap,
    };
    const decision = decideAccess(levels, ref);
    const refusal =
      keyStatus !== 'ACTIVE' ? keyRefusal(keyStatus) : decision.allowed ? null : policyRefusal(decision, levels);
    if (refusal)
      return { ...base, visible: false, callable: false, autoExecute: false, price: null, rateLimits: [], refusal };
    const rule = await this.pricing.priceFor(ids.orgId, t.upstreamId, t.name, now);
    return {
      ...base,
      visible: true,
      callable: true,
      autoExecute: levels.some((l) => firstMatchingPattern(l.autoExecute, ref) !== undefined),
      price: { rule: rule ?? FREE_PRICE, isDefault: rule === null },
      rateLimits: await this.rateLimits.rulesFor(ids, ref),
      refusal: null,
    };
  }
}

function keyRefusal(status: Exclude<KeyStatus, 'ACTIVE'>): ToolRefusal {
  return status === 'REVOKED'
    ? { reason: 'KEY_REVOKED', scope: null, scopeId: null, rule: null, message: 'the key is revoked' }
    : { reason: 'KEY_EXPIRED', scope: null, scopeId: null, rule: null, message: 'the key has expired' };
}

function policyRefusal(decision: Exclude<AccessDecision, { allowed: true }>, levels: StoredPolicy[]): ToolRefusal {
  const message = describeDecision(decision);
  switch (decision.reason) {
    case 'DENIED_BY_RULE':
      return {
        reason: decision.reason,
        scope: decision.scope,
        scopeId: scopeIdOf(levels, decision.scope),
        rule: decision.rule,
        message,
      };
    case 'NOT_IN_ALLOW_LIST':
      return {
        reason: decision.reason,
        scope: decision.scope,
        scopeId: scopeIdOf(levels, decision.scope),
        rule: null,
        message,
      };
    case 'NO_ALLOW_LIST':
      return { reason: decision.reason, scope: null, scopeId: null, rule: null, message };
  }
}

function scopeIdOf(levels: StoredPolicy[], scope: PolicyScope): string {
  return levels.find((l) => l.scope === scope)?.scopeId ?? '';
}
