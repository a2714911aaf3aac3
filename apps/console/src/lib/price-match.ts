import type { PriceRule } from '../api/governance-types';

/** The edge's glob: `*` any run, `?` one character, the rest literal. */
function globMatches(pattern: string, name: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|[\]\\/-]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`).test(name);
}

const specificity = (p: string) => p.replace(/[*?]/g, '').length;

/**
 * The rule in force for a tool now, as libs/pricing's selectPriceRule picks it: the upstream's
 * rule over an org-wide one, then the most specific pattern, then the latest effective date.
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
  return Date.parse(a.effectiveFrom) - Date.parse(b.effectiveFrom);
}
