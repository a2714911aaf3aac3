import type { PriceRule } from '../api/governance-types';

/** The edge's glob: `*` any run, `?` one character, the rest literal. */
export function globMatches(pattern: string, name: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|[\]\\/-]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`).test(name);
}

const specificity = (p: string) => p.replace(/[*?]/g, '').length;

/**
 * The rule in force for a tool now, as libs/pricing's selectPriceRule picks it: the upstream's
 * rule over an org-wide one, then the most specific pattern, then the latest effective date, then
 * the rule added last (then the id).
 */
export function priceFor(rules: PriceRule[], upstreamId: string, toolName: string): PriceRule | null {
  let best: PriceRule | null = null;
  for (const r of rules) {
    if (r.state !== 'IN_FORCE' && r.state !== 'SUPERSEDED') continue;
    if (r.upstreamId !== null && r.upstreamId !== upstreamId) continue;
    if (
      r.toolPattern.startsWith('resource:') ||
      r.toolPattern.startsWith('prompt:') ||
      !globMatches(r.toolPattern, toolName)
    )
      continue;
    if (!best || compare(r, best) > 0) best = r;
  }
  return best;
}

function compare(a: PriceRule, b: PriceRule): number {
  const up = Number(a.upstreamId !== null) - Number(b.upstreamId !== null);
  if (up !== 0) return up;
  const sp = specificity(a.toolPattern) - specificity(b.toolPattern);
  if (sp !== 0) return sp;
  const from = Date.parse(a.effectiveFrom) - Date.parse(b.effectiveFrom);
  if (from !== 0) return from;
  const added = Date.parse(a.createdAt) - Date.parse(b.createdAt);
  if (added !== 0) return added;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** What a new rule would change: per rule it takes tools from (null: tools that had no price), and what it leaves. */
export interface Takeover<T> {
  /** Tools the new rule would price, grouped by the rule that prices them now (null: unpriced until now). */
  from: { rule: PriceRule | null; tools: T[] }[];
  /** Tools the pattern matches that keep a more specific (or upstream-own) rule. */
  keep: { rule: PriceRule; tools: T[] }[];
}

/**
 * The new rule's effect on the catalog, by the edge's own choice (priceFor): every matching tool either
 * moves to the new rule (from the rule pricing it now, or from none) or stays on a rule that wins over it.
 */
export function takeover<T extends { upstreamId: string; name: string }>(
  rules: PriceRule[],
  proposed: PriceRule,
  tools: T[],
): Takeover<T> {
  const from = new Map<string | null, { rule: PriceRule | null; tools: T[] }>();
  const keep = new Map<string, { rule: PriceRule; tools: T[] }>();
  for (const t of tools) {
    const after = priceFor([...rules, proposed], t.upstreamId, t.name);
    if (after === proposed) {
      const now = priceFor(rules, t.upstreamId, t.name);
      const entry = from.get(now?.id ?? null) ?? { rule: now, tools: [] };
      entry.tools.push(t);
      from.set(now?.id ?? null, entry);
    } else if (
      after &&
      (proposed.upstreamId === null || proposed.upstreamId === t.upstreamId) &&
      globMatches(proposed.toolPattern, t.name)
    ) {
      const entry = keep.get(after.id) ?? { rule: after, tools: [] };
      entry.tools.push(t);
      keep.set(after.id, entry);
    }
  }
  return { from: [...from.values()], keep: [...keep.values()] };
}
