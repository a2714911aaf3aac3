import { TenantLevel, ToolRef, firstMatchingPattern } from '@tollgate/kernel';
import { firstMatchingResourcePattern } from './resource-pattern';

export type PolicyScope = TenantLevel;

export interface PolicyLevel {
  scope: PolicyScope;
  allow: readonly string[];
  deny: readonly string[];
}

export type AccessDecision =
  | { allowed: true }
  | { allowed: false; reason: 'DENIED_BY_RULE'; scope: PolicyScope; rule: string }
  | { allowed: false; reason: 'NOT_IN_ALLOW_LIST'; scope: PolicyScope }
  | { allowed: false; reason: 'NO_ALLOW_LIST' };

/** The levels from the broadest to the most specific. */
const SCOPE_RANK: Record<PolicyScope, number> = { ORG: 0, TEAM: 1, USER: 2, KEY: 3 };

/**
 * The levels from the broadest (ORG) to the most specific (KEY), in their given order within a
 * scope: the array itself when it is in that order already (PolicyService keeps an organisation's
 * policies so, and a caller's levels are a filter of them), else a sorted copy. Every governed call
 * decides over its levels; a copy and a sort of them on each was work for nothing.
 */
export function broadestFirst<T extends { scope: PolicyScope }>(levels: readonly T[]): readonly T[] {
  for (let i = 1; i < levels.length; i++) {
    if (byBroadestScope(levels[i - 1], levels[i]) > 0) return [...levels].sort(byBroadestScope);
  }
  return levels;
}

/** Sort order of policy levels: the broadest scope (ORG) first. */
export function byBroadestScope(a: { scope: PolicyScope }, b: { scope: PolicyScope }): number {
  return SCOPE_RANK[a.scope] - SCOPE_RANK[b.scope];
}

/**
 * Deny wins at every level; each level that has an allow list must allow the tool, so a lower
 * level can only narrow what the level above allows. With no allow list anywhere nothing is
 * allowed: Tollgate is default-deny.
 */
export function decideAccess(
  levels: readonly PolicyLevel[],
  ref: ToolRef,
  firstMatching: PatternMatcher = firstMatchingPattern,
): AccessDecision {
  const ordered = broadestFirst(levels);
  for (const level of ordered) {
    const rule = firstMatching(level.deny, ref);
    if (rule) return { allowed: false, reason: 'DENIED_BY_RULE', scope: level.scope, rule };
  }
  let anyAllowList = false;
  for (const level of ordered) {
    if (level.allow.length === 0) continue;
    anyAllowList = true;
    if (!firstMatching(level.allow, ref)) return { allowed: false, reason: 'NOT_IN_ALLOW_LIST', scope: level.scope };
  }
  return anyAllowList ? { allowed: true } : { allowed: false, reason: 'NO_ALLOW_LIST' };
}

type PatternMatcher = (patterns: readonly string[], ref: ToolRef) => string | undefined;

/** What a policy governs: tools (`allow`/`deny`), resources (`resourceAllow`/...) and prompts (`promptAllow`/...). */
export type GovernedItemKind = 'tool' | 'resource' | 'prompt';

export interface ItemPolicyLevel extends PolicyLevel {
  resourceAllow: readonly string[];
  resourceDeny: readonly string[];
  promptAllow: readonly string[];
  promptDeny: readonly string[];
}

/**
 * The same decision for a resource (ref.tool is its URI) or a prompt (its name), made over the
 * policy's own lists for that kind: deny wins, every level with an allow list must allow, default deny.
 */
export function decideItemAccess(
  levels: readonly ItemPolicyLevel[],
  kind: GovernedItemKind,
  ref: ToolRef,
): AccessDecision {
  if (kind === 'tool') return decideAccess(levels, ref);
  const lists = levels.map((l) => ({
    scope: l.scope,
    allow: kind === 'resource' ? l.resourceAllow : l.promptAllow,
    deny: kind === 'resource' ? l.resourceDeny : l.promptDeny,
  }));
  return decideAccess(lists, ref, kind === 'resource' ? firstMatchingResourcePattern : firstMatchingPattern);
}

export function describeDecision(decision: AccessDecision, kind: GovernedItemKind = 'tool'): string {
  if (decision.allowed) return 'allowed';
  switch (decision.reason) {
    case 'DENIED_BY_RULE':
      return `denied by ${kind === 'tool' ? '' : `${kind} `}rule "${decision.rule}" of the ${decision.scope.toLowerCase()} policy`;
    case 'NOT_IN_ALLOW_LIST':
      return `not in the ${decision.scope.toLowerCase()} policy's ${kind === 'tool' ? '' : `${kind} `}allow list`;
    case 'NO_ALLOW_LIST':
      return `no policy allows any ${kind} for this key`;
  }
}

export interface OutputLimitLevel {
  scope: PolicyScope;
  outputTokenCap: number | null;
  outputOverflow: 'PAGE' | 'REFUSE' | null;
}

/**
 * The output limits policy sets for a caller: the smallest cap of any level (a lower level can
 * only tighten it) and the overflow handling of the most specific level that says, else PAGE.
 */
export function effectiveOutputLimits(levels: readonly OutputLimitLevel[]): {
  cap: number | null;
  overflow: 'PAGE' | 'REFUSE';
} {
  // One pass, no arrays: this runs on every governed call.
  let cap: number | null = null;
  let specific: OutputLimitLevel | null = null;
  for (const l of levels) {
    if (l.outputTokenCap !== null && (cap === null || l.outputTokenCap < cap)) cap = l.outputTokenCap;
    // The first level of the most specific scope that says (strictly more specific replaces it).
    if (l.outputOverflow !== null && (specific === null || SCOPE_RANK[l.scope] > SCOPE_RANK[specific.scope]))
      specific = l;
  }
  return { cap, overflow: specific?.outputOverflow ?? 'PAGE' };
}
