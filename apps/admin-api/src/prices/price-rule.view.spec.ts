import type { PriceRule } from '@tollgate/db';
import { describe, expect, it } from 'vitest';
import { toPriceHistory } from './price-rule.view';

const FROM = new Date('2026-01-01T00:00:00Z');
const rule = (id: string, perCallMicros: bigint, createdAt: string): PriceRule => ({
  id,
  orgId: 'org',
  upstreamId: null,
  toolPattern: 'search',
  perCallMicros,
  perOutputTokenMicros: 0n,
  acceptReportedCost: false,
  reportedCostCapMicros: 0n,
  chargeFailedCalls: false,
  effectiveFrom: FROM,
  effectiveUntil: null,
  createdAt: new Date(createdAt),
});

describe('the price book history', () => {
  it('should show the rule added later in force, and the earlier one superseded, when both start at the same instant', () => {
    const first = rule('00000000-0000-4000-8000-00000000000b', 10n, '2025-12-01T00:00:00Z');
    const correction = rule('00000000-0000-4000-8000-00000000000a', 12n, '2025-12-02T00:00:00Z');
    const history = toPriceHistory([first, correction], new Date('2026-02-01T00:00:00Z'));
    expect(history.map((r) => [r.perCallMicros, r.state])).toEqual([
      [10, 'SUPERSEDED'],
      [12, 'IN_FORCE'],
    ]);
  });
});
