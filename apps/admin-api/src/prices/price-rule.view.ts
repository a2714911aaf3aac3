import { ApiProperty } from '@nestjs/swagger';
import type { PriceRule } from '@tollgate/db';
import { microsToJson } from '@tollgate/kernel';
import { comparePriceRules } from '@tollgate/pricing';

/** A price rule; money as JSON integers of micro-units. */
export class PriceRuleView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) upstreamId!: string | null;
  @ApiProperty() toolPattern!: string;
  @ApiProperty({ type: 'integer' }) perCallMicros!: number;
  @ApiProperty({ type: 'integer' }) perOutputTokenMicros!: number;
  @ApiProperty() acceptReportedCost!: boolean;
  @ApiProperty({ type: 'integer' }) reportedCostCapMicros!: number;
  @ApiProperty() chargeFailedCalls!: boolean;
  @ApiProperty() effectiveFrom!: Date;
  @ApiProperty({
    nullable: true,
    type: Date,
    description: 'The rule prices no call from this instant on (null: open-ended)',
  })
  effectiveUntil!: Date | null;
  @ApiProperty() createdAt!: Date;
}

export function toPriceRuleView(r: PriceRule): PriceRuleView {
  return {
    id: r.id,
    orgId: r.orgId,
    upstreamId: r.upstreamId,
    toolPattern: r.toolPattern,
    perCallMicros: microsToJson(r.perCallMicros),
    perOutputTokenMicros: microsToJson(r.perOutputTokenMicros),
    acceptReportedCost: r.acceptReportedCost,
    reportedCostCapMicros: microsToJson(r.reportedCostCapMicros),
    chargeFailedCalls: r.chargeFailedCalls,
    effectiveFrom: r.effectiveFrom,
    effectiveUntil: r.effectiveUntil,
    createdAt: r.createdAt,
  };
}

export const PRICE_RULE_STATES = ['SCHEDULED', 'IN_FORCE', 'SUPERSEDED', 'ENDED'] as const;
export type PriceRuleState = (typeof PRICE_RULE_STATES)[number];

/** A rule of the price book's history, with where it stands now. */
export class PriceRuleHistoryView extends PriceRuleView {
  @ApiProperty({
    enum: PRICE_RULE_STATES,
    description:
      'SCHEDULED: not yet effective; ENDED: past its effectiveUntil; SUPERSEDED: a later rule for the same upstream and pattern took over (of two from the same instant, the one added later); IN_FORCE otherwise',
  })
  state!: PriceRuleState;
}

/** Where each rule stands at `now`, among rules for the same upstream and tool pattern. */
export function toPriceHistory(rules: PriceRule[], now: Date): PriceRuleHistoryView[] {
  return rules.map((r) => {
    const live = (x: PriceRule) => x.effectiveFrom <= now && !(x.effectiveUntil && x.effectiveUntil <= now);
    const superseded = rules.some(
      (o) =>
        o !== r &&
        o.upstreamId === r.upstreamId &&
        o.toolPattern === r.toolPattern &&
        live(o) &&
        // A later start, or the same start added later: the edge's own order.
        comparePriceRules(o, r) > 0,
    );
    const state: PriceRuleState =
      r.effectiveFrom > now
        ? 'SCHEDULED'
        : r.effectiveUntil && r.effectiveUntil <= now
          ? 'ENDED'
          : superseded
            ? 'SUPERSEDED'
            : 'IN_FORCE';
    return { ...toPriceRuleView(r), state };
  });
}
