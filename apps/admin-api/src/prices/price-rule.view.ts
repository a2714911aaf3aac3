import { ApiProperty } from '@nestjs/swagger';
import type { PriceRule } from '@tollgate/db';
import { microsToJson } from '@tollgate/kernel';

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
    createdAt: r.createdAt,
  };
}
