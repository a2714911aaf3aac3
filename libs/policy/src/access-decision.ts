import { TenantLevel, ToolRef, firstMatchingPattern } from '@tollgate/kernel';

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
export function decideAccess(levels: readonly PolicyLevel[], ref: ToolRef): AccessDecision {
  const ordered = [...levels].sort((a, b) => SCOPE_ORDER.indexOf(a.scope) - SCOPE_ORDER.indexOf(b.scope));
  for (const level of ordered) {
    const rule = firstMatchingPattern(level.deny, ref);
    if (rule) return { allowed: false, reason: 'DENIED_BY_RULE', scope: level.scope, rule };
  }
  let anyAllowList = false;
  for (const level of ordered) {
    if (level.allow.length === 0) continue;
    anyAllowList = true;
    if (!firstMatchingPattern(level.allow, ref)) return { allowed: false, reason: 'NOT_IN_ALLOW_LIST', scope: level.scope };
  }
  return anyAllowList ? { allowed: true } : { allowed: false, reason: 'NO_ALLOW_LIST' };
}

export function describeDecision(decision: AccessDecision): string {
  if (decision.allowed) return 'allowed';
  switch (decision.reason) {
    case 'DENIED_BY_RULE':
      return `denied by rule "${decision.rule}" of the ${decision.scope.toLowerCase()} policy`;
    case 'NOT_IN_ALLOW_LIST':
      return `not in the ${decision.scope.toLowerCase()} policy's allow list`;
    case 'NO_ALLOW_LIST':
      return 'no policy allows any tool for this key';
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
export function effectiveOutputLimits(levels: readonly OutputLimitLevel[]): { cap: number | null; overflow: 'PAGE' | 'REFUSE' } {
  const caps = levels.map((l) => l.outputTokenCap).filter((c): c is number => c !== null);
  const specific = [...levels].sort((a, b) => SCOPE_ORDER.indexOf(b.scope) - SCOPE_ORDER.indexOf(a.scope)).find((l) => l.outputOverflow !== null);
  return { cap: caps.length ? Math.min(...caps) : null, overflow: specific?.outputOverflow ?? 'PAGE' };
}
