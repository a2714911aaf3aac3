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

const SCOPE_ORDER: PolicyScope[] = ['ORG', 'TEAM', 'USER', 'KEY'];

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
  const ordered = [...levels].sort((a, b) => SCOPE_ORDER.indexOf(a.scope) - SCOPE_ORDER.indexOf(b.scope));
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
  const caps = levels.map((l) => l.outputTokenCap).filter((c): c is number => c !== null);
  const specific = [...levels]
    .sort((a, b) => SCOPE_ORDER.indexOf(b.scope) - SCOPE_ORDER.indexOf(a.scope))
    .find((l) => l.outputOverflow !== null);
  return { cap: caps.length ? Math.min(...caps) : null, overflow: specific?.outputOverflow ?? 'PAGE' };
}
