import { ApiProperty } from '@nestjs/swagger';
import type { Budget } from '@tollgate/db';
import { BUDGET_MODES, BUDGET_PERIODS, microsToJson, TENANT_LEVELS } from '@tollgate/kernel';

export class BudgetView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty({ enum: TENANT_LEVELS }) scope!: string;
  @ApiProperty({ format: 'uuid' }) scopeId!: string;
  @ApiProperty({ enum: BUDGET_PERIODS }) period!: string;
  @ApiProperty({ type: 'integer', description: 'Integer micro-units' }) limitMicros!: number;
  @ApiProperty({ enum: BUDGET_MODES }) mode!: string;
  @ApiProperty({ type: [Number] }) alertThresholds!: number[];
  @ApiProperty({
    description: 'Optimistic concurrency: the ETag of the budget; send it as If-Match to refuse a stale write (412)',
  })
  version!: number;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export function toBudgetView(b: Budget): BudgetView {
  return {
    id: b.id,
    orgId: b.orgId,
    scope: b.scope,
    scopeId: b.scopeId,
    period: b.period,
    limitMicros: microsToJson(b.limitMicros),
    mode: b.mode,
    alertThresholds: b.alertThresholds,
    version: b.version,
    createdAt: b.createdAt,
    updatedAt: b.updatedAt,
  };
}
