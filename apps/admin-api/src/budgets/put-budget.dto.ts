import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsUUID, Max, Min } from 'class-validator';
import { IsMicros } from '../common/micros.validator';
import { propertyStack } from '../common/property-stack';

export const BUDGET_SCOPES = ['ORG', 'TEAM', 'USER', 'KEY'] as const;
export const BUDGET_PERIODS = ['DAY', 'WEEK', 'MONTH', 'QUARTER', 'TOTAL'] as const;
export const BUDGET_MODES = ['HARD', 'SOFT'] as const;

/** Alert thresholds of a budget: up to 10 whole percentages of its limit, 1 to 1000. */
export function IsAlertThresholds(): PropertyDecorator {
  return propertyStack(
    IsArray(),
    ArrayMaxSize(10),
    IsInt({ each: true }),
    Min(1, { each: true }),
    Max(1000, { each: true }),
  );
}

/** One budget per org, scope, scope id and period: a PUT creates it or replaces its limit, mode and alerts. */
export class PutBudgetDto {
  @ApiProperty({ enum: BUDGET_SCOPES })
  @IsIn(BUDGET_SCOPES, { message: `scope must be one of: ${BUDGET_SCOPES.join(', ')}` })
  scope!: (typeof BUDGET_SCOPES)[number];

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
