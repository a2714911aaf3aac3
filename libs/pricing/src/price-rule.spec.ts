import { describe, expect, it } from 'vitest';
import { actualCallCost, estimateCallCost, FREE_PRICE, PriceRuleData, selectPriceRule } from './price-rule';

const rule = (over: Partial<PriceRuleData>): PriceRuleData => ({
  ...FREE_PRICE,
  id: Math.random().toString(36),
  ...over,
});
const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-06-01T00:00:00Z');

describe('price rules', () => {
  it('should prefer an upstream rule over an org-wide one, then the more specific pattern', () => {
    const orgWide = rule({ toolPattern: 'echo', perCallMicros: 1n, effectiveFrom: T0 });
    const upstreamAll = rule({ upstreamId: 'u1', toolPattern: '*', perCallMicros: 2n, effectiveFrom: T0 });
    const upstreamEcho = rule({ upstreamId: 'u1', toolPattern: 'echo', perCallMicros: 3n, effectiveFrom: T0 });
    const rules = [orgWide, upstreamAll, upstreamEcho];
    expect(selectPriceRule(rules, 'u1', 'echo', T1)).toBe(upstreamEcho);
    expect(selectPriceRule(rules, 'u1', 'other', T1)).toBe(upstreamAll);
    expect(selectPriceRule(rules, 'u2', 'echo', T1)).toBe(orgWide);
    expect(selectPriceRule(rules, 'u2', 'other', T1)).toBeNull();
  });

  it('should price a past call with the rule that was in force then', () => {
    const old = rule({ upstreamId: 'u1', perCallMicros: 10n, effectiveFrom: T0 });
    const raised = rule({ upstreamId: 'u1', perCallMicros: 20n, effectiveFrom: T1 });
    expect(selectPriceRule([old, raised], 'u1', 'x', new Date('2026-03-01T00:00:00Z'))).toBe(old);
    expect(selectPriceRule([old, raised], 'u1', 'x', new Date('2026-07-01T00:00:00Z'))).toBe(raised);
  });

  it('should price with the rule added last when two rules of one pattern take effect at the same instant', () => {
    const first = rule({ id: 'b', perCallMicros: 10n, effectiveFrom: T0, createdAt: new Date('2025-12-01T00:00:00Z') });
    const correction = rule({
      id: 'a',
      perCallMicros: 12n,
      effectiveFrom: T0,
      createdAt: new Date('2025-12-02T00:00:00Z'),
    });
    // The order the database lists them in does not matter.
    expect(selectPriceRule([first, correction], 'u1', 'x', T1)).toBe(correction);
    expect(selectPriceRule([correction, first], 'u1', 'x', T1)).toBe(correction);
    // Added in the same instant (one statement): the id decides, the same on every edge.
    const twin = rule({ id: 'c', perCallMicros: 14n, effectiveFrom: T0, createdAt: correction.createdAt });
    expect(selectPriceRule([twin, correction], 'u1', 'x', T1)).toBe(twin);
    expect(selectPriceRule([correction, twin], 'u1', 'x', T1)).toBe(twin);
  });

  it('should reserve the per-call price plus the output-token price times the cap plus the reported-cost cap', () => {
    const r = rule({
      perCallMicros: 1000n,
      perOutputTokenMicros: 2n,
      acceptReportedCost: true,
      reportedCostCapMicros: 50_000n,
    });
    expect(estimateCallCost(r, 4000)).toBe(1000n + 8000n + 50_000n);
  });

  it('should charge actual tokens and a capped reported cost, never more than the estimate', () => {
    const r = rule({
      perCallMicros: 1000n,
      perOutputTokenMicros: 2n,
      acceptReportedCost: true,
      reportedCostCapMicros: 50_000n,
    });
    expect(actualCallCost(r, { failed: false, outputTokens: 120, reportedCostMicros: 7_000n }, 4000)).toBe(
      1000n + 240n + 7000n,
    );
    expect(actualCallCost(r, { failed: false, outputTokens: 9000, reportedCostMicros: 900_000n }, 4000)).toBe(
      estimateCallCost(r, 4000),
    );
  });

  it('should ignore a reported cost the rule does not accept, and make failed calls free unless told otherwise', () => {
    const r = rule({ perCallMicros: 1000n });
    expect(actualCallCost(r, { failed: false, outputTokens: 0, reportedCostMicros: 5000n }, 100)).toBe(1000n);
    expect(actualCallCost(r, { failed: true, outputTokens: 0, reportedCostMicros: null }, 100)).toBe(0n);
    expect(
      actualCallCost(
        { ...r, chargeFailedCalls: true },
        { failed: true, outputTokens: 0, reportedCostMicros: null },
        100,
      ),
    ).toBe(1000n);
  });

  it('should price resource reads and prompt gets only with rules of their own kind', () => {
    const all = rule({ toolPattern: '*', perCallMicros: 1n, effectiveFrom: T0 });
    const reads = rule({ toolPattern: 'resource:test://*', perCallMicros: 2n, effectiveFrom: T0 });
    const prompts = rule({ toolPattern: 'prompt:*', perCallMicros: 3n, effectiveFrom: T0 });
    const rules = [all, reads, prompts];
    expect(selectPriceRule(rules, 'u1', 'echo', T1)).toBe(all);
    expect(selectPriceRule(rules, 'u1', 'resource:test://static-text', T1)).toBe(reads);
    expect(selectPriceRule(rules, 'u1', 'resource:file:///x', T1)).toBeNull();
    expect(selectPriceRule(rules, 'u1', 'prompt:simple', T1)).toBe(prompts);
    expect(selectPriceRule([all], 'u1', 'prompt:simple', T1)).toBeNull();
  });

  it('should price completions and subscriptions only with rules of their own kind', () => {
    const all = rule({ toolPattern: '*', perCallMicros: 1n, effectiveFrom: T0 });
    const prompts = rule({ toolPattern: 'prompt:*', perCallMicros: 3n, effectiveFrom: T0 });
    const completions = rule({ toolPattern: 'completion:*', perCallMicros: 4n, effectiveFrom: T0 });
    const subscriptions = rule({ toolPattern: 'subscription:test://*', perCallMicros: 5n, effectiveFrom: T0 });
    const rules = [all, prompts, completions, subscriptions];
    expect(selectPriceRule(rules, 'u1', 'completion:simple', T1)).toBe(completions);
    expect(selectPriceRule(rules, 'u1', 'subscription:test://watched', T1)).toBe(subscriptions);
    expect(selectPriceRule(rules, 'u1', 'subscription:file:///x', T1)).toBeNull();
    expect(selectPriceRule([all, prompts], 'u1', 'completion:simple', T1)).toBeNull();
  });

  it('should not price with a rule from its effectiveUntil on, falling back to the next in line', () => {
    const older = rule({ toolPattern: '*', perCallMicros: 1n, effectiveFrom: T0 });
    const ended = rule({ toolPattern: 'echo', perCallMicros: 9n, effectiveFrom: T0, effectiveUntil: T1 });
    expect(selectPriceRule([older, ended], 'u1', 'echo', new Date(T1.getTime() - 1))).toBe(ended);
    expect(selectPriceRule([older, ended], 'u1', 'echo', T1)).toBe(older);
  });
});
