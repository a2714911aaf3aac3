import { Micros, maxMicros, minMicros, patternSpecificity } from '@tollgate/kernel';

export interface PriceRuleData {
  id: string;
  upstreamId: string | null;
  toolPattern: string;
  perCallMicros: Micros;
  perOutputTokenMicros: Micros;
  acceptReportedCost: boolean;
  reportedCostCapMicros: Micros;
  chargeFailedCalls: boolean;
  effectiveFrom: Date;
  /** Ended from this instant on; null or absent: open-ended. */
  effectiveUntil?: Date | null;
  /** When the rule was added: of two rules alike but for it, the one added later wins. */
  createdAt?: Date;
}

/** What a call is priced with when no rule matches: free, but still metered. */
export const FREE_PRICE: PriceRuleData = {
  id: '',
  upstreamId: null,
  toolPattern: '*',
  perCallMicros: 0n,
  perOutputTokenMicros: 0n,
  acceptReportedCost: false,
  reportedCostCapMicros: 0n,
  chargeFailedCalls: false,
  effectiveFrom: new Date(0),
};

// Compiled once per pattern: selecting a price runs on every governed call.
const compiledToolGlobs = new Map<string, RegExp>();

function toolGlobMatches(pattern: string, toolName: string): boolean {
  let re = compiledToolGlobs.get(pattern);
  if (!re) {
    const body = pattern
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\/-]/g, '\\$&')))
      .join('');
    re = new RegExp(`^${body}$`);
    compiledToolGlobs.set(pattern, re);
  }
  return re.test(toolName);
}

/** What is priced besides tool calls, each under `<kind>:<key>`. */
export const PRICED_ITEM_KINDS = ['resource', 'prompt', 'completion', 'subscription'] as const;
export type PricedItemKind = (typeof PRICED_ITEM_KINDS)[number];

/**
 * What a priced name is: a tool (`search`), a resource read (`resource:<uri>`), a prompt get
 * (`prompt:<name>`), a completion (`completion:<prompt name or URI template>`) or a resource
 * subscription (`subscription:<uri>`). A rule prices only names of its own kind, so `*` never
 * prices a read, a get, a completion or a subscription.
 */
export function pricedKindOf(nameOrPattern: string): 'tool' | PricedItemKind {
  return PRICED_ITEM_KINDS.find((kind) => nameOrPattern.startsWith(`${kind}:`)) ?? 'tool';
}

/** The name a resource read, prompt get, completion or subscription is priced and metered under. */
export function pricedItemName(kind: PricedItemKind, key: string): string {
  return `${kind}:${key}`;
}

/**
 * The rule in force at `at` for a tool (or a `resource:`/`prompt:` name): among rules already effective, a rule for the upstream
 * beats an org-wide one, then the more specific tool pattern wins, then the latest effective date,
 * then the rule added last (comparePriceRules).
 * Past calls keep the price that was in force when they ran, since rules are never edited in place.
 */
export function selectPriceRule(
  rules: readonly PriceRuleData[],
  upstreamId: string,
  toolName: string,
  at: Date,
): PriceRuleData | null {
  let best: PriceRuleData | null = null;
  for (const rule of rules) {
    if (rule.effectiveFrom > at) continue;
    if (rule.effectiveUntil && rule.effectiveUntil <= at) continue;
    if (rule.upstreamId !== null && rule.upstreamId !== upstreamId) continue;
    if (pricedKindOf(rule.toolPattern) !== pricedKindOf(toolName) || !toolGlobMatches(rule.toolPattern, toolName))
      continue;
    if (!best || comparePriceRules(rule, best) > 0) best = rule;
  }
  return best;
}

/**
 * Which of two rules naming a tool wins (> 0: `a`). Rules are append-only, so two rules for the
 * same pattern from the same instant mean the later one corrects the earlier: the rule added last
 * wins, and the id settles rules added in the same instant, so every edge picks the same one.
 */
export function comparePriceRules(
  a: Pick<PriceRuleData, 'id' | 'upstreamId' | 'toolPattern' | 'effectiveFrom' | 'createdAt'>,
  b: Pick<PriceRuleData, 'id' | 'upstreamId' | 'toolPattern' | 'effectiveFrom' | 'createdAt'>,
): number {
  const upstream = Number(a.upstreamId !== null) - Number(b.upstreamId !== null);
  if (upstream !== 0) return upstream;
  const specificity = patternSpecificity(a.toolPattern) - patternSpecificity(b.toolPattern);
  if (specificity !== 0) return specificity;
  const from = a.effectiveFrom.getTime() - b.effectiveFrom.getTime();
  if (from !== 0) return from;
  const added = (a.createdAt?.getTime() ?? 0) - (b.createdAt?.getTime() ?? 0);
  if (added !== 0) return added;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * What is reserved against every budget before the upstream is called: the per-call price,
 * `outputTokens` output tokens (likelyOutputTokens, or fewer to fit a hard budget) and the
 * reported-cost cap. Output beyond those tokens is admitted separately once the result is known
 * (outputTopUp), so the reservation is the call's likely cost, not its worst case.
 */
export function estimateCallCost(rule: PriceRuleData, outputTokens: number): Micros {
  const reported = rule.acceptReportedCost ? rule.reportedCostCapMicros : 0n;
  return rule.perCallMicros + rule.perOutputTokenMicros * BigInt(outputTokens) + reported;
}

/**
 * Output tokens a call reserves for: the tool's observed 99th percentile (kept by the worker from
 * the ledger), at most the cap. A tool with no history reserves for the whole cap: nothing bounds
 * its output but the cap, and a small hard budget still admits it, fitted to what it has left
 * (outputTokensAffordable).
 */
export function likelyOutputTokens(observedP99: number | null, cap: number): number {
  return observedP99 === null ? cap : Math.min(Math.max(observedP99, 0), cap);
}

/**
 * Output tokens `availableMicros` buys at this rule once the per-call price and the reported-cost
 * cap are paid (0 when it does not even cover those); null when the rule does not price output.
 */
export function outputTokensAffordable(rule: PriceRuleData, availableMicros: Micros): number | null {
  if (rule.perOutputTokenMicros <= 0n) return null;
  const left = availableMicros - estimateCallCost(rule, 0);
  if (left < 0n) return 0;
  const tokens = left / rule.perOutputTokenMicros;
  return tokens > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(tokens);
}

/**
 * What a result of `resultTokens` needs beyond the `reservedTokens` its call reserved for, to be
 * delivered up to `cap`: that many more tokens at the rule's price, admitted against the budgets
 * like a page read (a hard budget refuses what it cannot cover). Null when nothing more is needed.
 */
export function outputTopUp(
  rule: PriceRuleData,
  reservedTokens: number,
  resultTokens: number,
  cap: number,
): { tokens: number; micros: Micros } | null {
  const tokens = Math.min(resultTokens, cap) - reservedTokens;
  if (tokens <= 0 || rule.perOutputTokenMicros <= 0n) return null;
  return { tokens, micros: rule.perOutputTokenMicros * BigInt(tokens) };
}

/**
 * A call's cost split over what it holds: its reservation settles at most what it reserved, a
 * top-up the rest (never more than the top-up, since the cost is priced on delivered tokens).
 */
export function splitSettlement(cost: Micros, reserved: Micros): { reservation: Micros; topUp: Micros } {
  const reservation = minMicros(cost, reserved);
  return { reservation, topUp: cost - reservation };
}

export interface CallOutcomeForPricing {
  failed: boolean;
  outputTokens: number;
  /** A cost the tool reported in its result `_meta`, in micro-units, if any. */
  reportedCostMicros: Micros | null;
}

/** The actual cost of a finished call: never more than its reservation plus any top-up admitted for its delivered tokens. */
export function actualCallCost(rule: PriceRuleData, outcome: CallOutcomeForPricing, outputTokenCap: number): Micros {
  if (outcome.failed && !rule.chargeFailedCalls) return 0n;
  const tokens = BigInt(Math.min(outcome.outputTokens, outputTokenCap));
  let cost = rule.perCallMicros + rule.perOutputTokenMicros * tokens;
  if (rule.acceptReportedCost && outcome.reportedCostMicros !== null) {
    cost += minMicros(maxMicros(outcome.reportedCostMicros, 0n), rule.reportedCostCapMicros);
  }
  return cost;
}
