import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  actualCallCost,
  estimateCallCost,
  FREE_PRICE,
  likelyOutputTokens,
  outputTokensAffordable,
  outputTopUp,
  PriceRuleData,
  splitSettlement,
} from './price-rule';

const rule = (over: Partial<PriceRuleData>): PriceRuleData => ({ ...FREE_PRICE, id: 'r', ...over });

/** A hard budget as a plain reference model: spent and reserved against a limit. */
class HardBudget {
  spent = 0n;
  reserved = 0n;
  constructor(readonly limit: bigint) {}
  available(): bigint {
    const a = this.limit - this.spent - this.reserved;
    return a > 0n ? a : 0n;
  }
  reserve(amount: bigint): boolean {
    if (this.spent + this.reserved + amount > this.limit) return false;
    this.reserved += amount;
    return true;
  }
  settle(held: bigint, actual: bigint): void {
    this.reserved -= held;
    this.spent += actual;
  }
}

interface SimCall {
  rule: PriceRuleData;
  p99: number | null;
  cap: number;
  resultTokens: number;
  pageable: boolean;
  isError: boolean;
  reported: bigint | null;
}

/**
 * The edge's steps for one call (GovernedCallPipeline.admitCall, deliverableTokens, settleAndMeter)
 * against the reference budget, through the same pricing functions.
 */
class EdgeCall {
  state: 'new' | 'admitted' | 'refused' | 'done' = 'new';
  reservedTokens = 0;
  estimate = 0n;
  charged = 0n;
  delivered = 0;
  constructor(readonly c: SimCall) {}

  admit(b: HardBudget): void {
    this.reservedTokens = likelyOutputTokens(this.c.p99, this.c.cap);
    this.estimate = estimateCallCost(this.c.rule, this.reservedTokens);
    if (b.reserve(this.estimate)) return void (this.state = 'admitted');
    const fits = outputTokensAffordable(this.c.rule, b.available());
    if (fits === null || fits < 1 || fits >= this.reservedTokens) return void (this.state = 'refused');
    this.reservedTokens = fits;
    this.estimate = estimateCallCost(this.c.rule, fits);
    this.state = b.reserve(this.estimate) ? 'admitted' : 'refused';
  }

  complete(b: HardBudget): void {
    const { rule: r, cap, resultTokens } = this.c;
    const topUp = outputTopUp(r, this.reservedTokens, resultTokens, cap);
    let deliverable = cap;
    let topHeld = 0n;
    if (topUp) {
      if (b.reserve(topUp.micros)) {
        topHeld = topUp.micros;
        deliverable = this.reservedTokens + topUp.tokens;
      } else deliverable = this.reservedTokens;
    }
    const refused = resultTokens > deliverable && !(this.c.pageable && !this.c.isError);
    this.delivered = refused ? 0 : Math.min(resultTokens, deliverable);
    const cost = refused
      ? actualCallCost(r, { failed: true, outputTokens: 0, reportedCostMicros: null }, cap)
      : actualCallCost(
          r,
          { failed: this.c.isError, outputTokens: this.delivered, reportedCostMicros: this.c.reported },
          deliverable,
        );
    const split = splitSettlement(cost, this.estimate);
    expect(split.topUp).toBeLessThanOrEqual(topHeld);
    b.settle(this.estimate, split.reservation);
    b.settle(topHeld, split.topUp);
    this.charged = cost;
    this.state = 'done';
  }
}

const micros = (max: bigint) => fc.oneof(fc.constant(0n), fc.constant(1n), fc.bigInt({ min: 0n, max }));
const ruleArb = fc.record({
  perCallMicros: micros(5_000n),
  perOutputTokenMicros: micros(500n),
  acceptReportedCost: fc.boolean(),
  reportedCostCapMicros: micros(10_000n),
  chargeFailedCalls: fc.boolean(),
});
const callArb = fc.record({
  rule: ruleArb.map((r) => rule(r)),
  p99: fc.option(fc.nat(12_000), { nil: null }),
  cap: fc.oneof(fc.constant(0), fc.constant(1), fc.integer({ min: 0, max: 10_000 })),
  resultTokens: fc.oneof(fc.constant(0), fc.nat(20_000)),
  pageable: fc.boolean(),
  isError: fc.boolean(),
  reported: fc.option(fc.bigInt({ min: -1_000n, max: 50_000n }), { nil: null }),
});

describe('reserving a call’s likely cost', () => {
  it('should admit the issue’s small budget: 0.001 per call + 0.0001 per output token, 0.02 a day', () => {
    const r = rule({ perCallMicros: 1_000n, perOutputTokenMicros: 100n });
    // No history, default cap: the worst case (0.801) does not fit 0.02, so the call is fitted to it.
    expect(estimateCallCost(r, likelyOutputTokens(null, 8_000))).toBe(801_000n);
    expect(outputTokensAffordable(r, 20_000n)).toBe(190);
    // With history (p99 of 40 tokens) it reserves 0.005, whatever the cap.
    expect(estimateCallCost(r, likelyOutputTokens(40, 8_000))).toBe(5_000n);
    // Cap lowered to 100 and 0.0096 left: 0.011 does not fit, 86 tokens do.
    expect(estimateCallCost(r, likelyOutputTokens(null, 100))).toBe(11_000n);
    expect(outputTokensAffordable(r, 9_600n)).toBe(86);
    // Less than the per-call price left: nothing to fit.
    expect(outputTokensAffordable(r, 999n)).toBe(0);
    expect(outputTokensAffordable(rule({ perCallMicros: 1_000n }), 0n)).toBeNull();
  });

  it('should reserve the observed p99, bounded by the cap, and top up only output beyond it', () => {
    expect(likelyOutputTokens(120, 8_000)).toBe(120);
    expect(likelyOutputTokens(9_000, 8_000)).toBe(8_000);
    expect(likelyOutputTokens(null, 500)).toBe(500);
    const r = rule({ perOutputTokenMicros: 3n });
    expect(outputTopUp(r, 120, 100, 8_000)).toBeNull();
    expect(outputTopUp(r, 120, 500, 8_000)).toEqual({ tokens: 380, micros: 1_140n });
    expect(outputTopUp(r, 120, 50_000, 8_000)).toEqual({ tokens: 7_880, micros: 23_640n });
    expect(outputTopUp(rule({ perCallMicros: 5n }), 0, 500, 8_000)).toBeNull();
    expect(splitSettlement(700n, 500n)).toEqual({ reservation: 500n, topUp: 200n });
    expect(splitSettlement(300n, 500n)).toEqual({ reservation: 300n, topUp: 0n });
  });

  it('should never let a hard budget end above its limit, whatever the calls, their results and their interleaving', () => {
    fc.assert(
      fc.property(
        micros(2_000_000n),
        fc.array(callArb, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 24 }),
        (limit, sims, schedule) => {
          const b = new HardBudget(limit);
          const calls = sims.map((s) => new EdgeCall(s));
          const step = (call: EdgeCall) => {
            if (call.state === 'new') call.admit(b);
            else if (call.state === 'admitted') call.complete(b);
            expect(b.spent + b.reserved).toBeLessThanOrEqual(limit);
            expect(b.reserved).toBeGreaterThanOrEqual(0n);
          };
          for (const pick of schedule) step(calls[pick % calls.length]);
          for (const call of calls) while (call.state === 'new' || call.state === 'admitted') step(call);
          expect(b.reserved).toBe(0n);
          expect(b.spent).toBeLessThanOrEqual(limit);
          expect(b.spent).toBe(calls.reduce((sum, c) => sum + c.charged, 0n));
          // Each answered call is charged what its delivered tokens cost, never more than its cap allows.
          for (const c of calls.filter((c) => c.state === 'done')) expect(c.delivered).toBeLessThanOrEqual(c.c.cap);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('should refuse a call alone against its budget only when the budget cannot pay its per-call price and one output token', () => {
    fc.assert(
      fc.property(micros(2_000_000n), callArb, (limit, sim) => {
        const b = new HardBudget(limit);
        const call = new EdgeCall(sim);
        call.admit(b);
        const cheapest = estimateCallCost(sim.rule, Math.min(1, likelyOutputTokens(sim.p99, sim.cap)));
        expect(call.state === 'admitted').toBe(limit >= cheapest);
      }),
      { numRuns: 2_000 },
    );
  });
});
