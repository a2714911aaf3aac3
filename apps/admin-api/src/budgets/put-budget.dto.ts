import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { BUDGET_MODES, BUDGET_PERIODS, TENANT_LEVELS } from '@tollgate/kernel';
import { IsAlertThresholds } from '../common/validation/alert-thresholds.validator';
import { IsMicros } from '../common/validation/micros.validator';

/** One budget per org, scope, scope id and period: a PUT creates it or replaces its limit, mode and alerts. */
export class PutBudgetDto {
  @ApiProperty({ enum: TENANT_LEVELS })
  @IsIn(TENANT_LEVELS, { message: `scope must be one of: ${TENANT_LEVELS.join(', ')}` })
  scope!: (typeof TENANT_LEVELS)[number];

  @ApiProperty({ format: 'uuid', description: 'The team, user or key id; the org id for ORG' })
  @IsUUID(undefined, { message: 'scopeId must be a UUID' })
  scopeId!: string;

  @ApiProperty({ enum: BUDGET_PERIODS, description: 'Calendar periods in the org’s time zone; TOTAL never resets' })
  @IsIn(BUDGET_PERIODS, { message: `period must be one of: ${BUDGET_PERIODS.join(', ')}` })
  period!: (typeof BUDGET_PERIODS)[number];

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    example: 50_000_000,
    description: 'Integer micro-units (1 USD = 1,000,000); a JSON integer, no fractions',
  })
  @IsMicros()
  limitMicros!: number;

  @ApiPropertyOptional({
    enum: BUDGET_MODES,
    default: 'HARD',
    description: 'HARD refuses calls over the limit; SOFT only alerts',
  })
  @IsOptional()
  @IsIn(BUDGET_MODES, { message: `mode must be one of: ${BUDGET_MODES.join(', ')}` })
  mode?: (typeof BUDGET_MODES)[number];

  @ApiPropertyOptional({
    type: [Number],
    default: [80, 100],
    example: [50, 80, 100],
    description: 'Percentages of the limit at which alerts fire',
  })
  @IsOptional()
  @IsAlertThresholds()
  alertThresholds?: number[];
}
