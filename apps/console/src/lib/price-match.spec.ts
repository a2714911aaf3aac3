import { describe, expect, it } from 'vitest';
import type { PriceRule } from '../api/governance-types';
import { priceFor, takeover } from './price-match';

const rule = (
  id: string,
  upstreamId: string | null,
  toolPattern: string,
  effectiveFrom = '2026-01-01T00:00:00Z',
): PriceRule => ({
  id,
  orgId: 'org',
  upstreamId,
  toolPattern,
  perCallMicros: 1,
  perOutputTokenMicros: 0,
  acceptReportedCost: false,
  reportedCostCapMicros: 0,
  chargeFailedCalls: false,
  effectiveFrom,
  effectiveUntil: null,
  createdAt: effectiveFrom,
  state: 'IN_FORCE',
});
const tool = (upstreamId: string, name: string) => ({ upstreamId, name });
const TOOLS = [tool('fx', 'search_web'), tool('fx', 'search_news'), tool('fx', 'ping'), tool('db', 'search_rows')];

describe('which rules a new price rule supersedes', () => {
  it('should take tools from the broader rule and from none, and leave those a more specific rule prices', () => {
    const everyFx = rule('every-fx', 'fx', '*');
    const news = rule('news', 'fx', 'search_news');
    const proposed = rule('new', 'fx', 'search_*', '2026-11-26T00:00:00Z');
    const t = takeover([everyFx, news], proposed, TOOLS);
    expect(t.from.map((f) => [f.rule?.id ?? null, f.tools.map((x) => x.name)])).toEqual([['every-fx', ['search_web']]]);
    expect(t.keep.map((k) => [k.rule.id, k.tools.map((x) => x.name)])).toEqual([['news', ['search_news']]]);
    // db's tool is another upstream's: not touched; ping does not match.
    const orgWide = takeover([], rule('new', null, 'search_*', '2026-11-26T00:00:00Z'), TOOLS);
    expect(orgWide.from).toEqual([{ rule: null, tools: [TOOLS[0], TOOLS[1], TOOLS[3]] }]);
  });

  it('should supersede the same pattern (the later rule wins) and lose to an upstream-own rule when org-wide', () => {
    const same = rule('old', 'fx', 'ping');
    expect(takeover([same], rule('new', 'fx', 'ping', '2026-11-26T00:00:00Z'), TOOLS).from[0].rule?.id).toBe('old');
    const t = takeover([rule('fx-all', 'fx', '*')], rule('new', null, 'ping', '2026-11-26T00:00:00Z'), TOOLS);
    expect(t.from).toEqual([]);
    expect(t.keep[0].rule.id).toBe('fx-all');
  });

  it('should price with the rule added last of two that start at the same instant, as the edge does', () => {
    const first = { ...rule('b', 'fx', 'search_web'), createdAt: '2026-01-01T00:00:00Z' };
    const correction = { ...rule('a', 'fx', 'search_web'), createdAt: '2026-01-02T00:00:00Z' };
    expect(priceFor([first, correction], 'fx', 'search_web')?.id).toBe('a');
    expect(priceFor([correction, first], 'fx', 'search_web')?.id).toBe('a');
  });
});
