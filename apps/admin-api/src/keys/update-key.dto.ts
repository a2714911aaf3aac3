import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length } from 'class-validator';
import { BUDGET_MODES, BUDGET_PERIODS, DISCLOSURE_MODES, DisclosureModeName } from '@tollgate/kernel';
import { IsAlertThresholds } from '../common/validation/alert-thresholds.validator';
import { OptionalExpiresAt } from '../common/validation/future-date.validator';
import { IsMicros } from '../common/validation/micros.validator';
import { CreateRateLimitDto } from '../rate-limits/create-rate-limit.dto';
import { IsKeyMetadata, IsKeyTagList } from './key-labels.validator';

/** What PATCH changes on a key; absent fields stay as they are. */
export class UpdateKeyDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  name?: string;

  @ApiPropertyOptional({
    type: [String],
    example: ['project:atlas'],
    description: 'Replaces the key’s tags (up to 20)',
  })
  @IsOptional()
  @IsKeyTagList()
  tags?: string[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Replaces the key’s metadata (a JSON object, at most 4 KiB)',
  })
  @IsOptional()
  @IsKeyMetadata()
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({
    enum: DISCLOSURE_MODES,
    nullable: true,
    description: 'null: the policy’s mode. Seen by the key’s next request and next session',
  })
  @IsOptional()
  @IsIn(DISCLOSURE_MODES, { message: `disclosureMode must be one of: ${DISCLOSURE_MODES.join(', ')}` })
  disclosureMode?: DisclosureModeName | null;

  @OptionalExpiresAt()
  expiresAt?: string | null;
}

/** A budget on one key; team admins may set it for their team's keys up to the team's budget of the same period. */
export class PutKeyBudgetDto {
  @ApiProperty({ enum: BUDGET_PERIODS })
  @IsIn(BUDGET_PERIODS, { message: `period must be one of: ${BUDGET_PERIODS.join(', ')}` })
  period!: (typeof BUDGET_PERIODS)[number];

  @ApiProperty({ type: 'integer', minimum: 0, example: 5_000_000, description: 'Integer micro-units' })
  @IsMicros()
  limitMicros!: number;

  @ApiPropertyOptional({ enum: BUDGET_MODES, default: 'HARD' })
  @IsOptional()
  @IsIn(BUDGET_MODES, { message: `mode must be one of: ${BUDGET_MODES.join(', ')}` })
  mode?: (typeof BUDGET_MODES)[number];

  @ApiPropertyOptional({ type: [Number], default: [80, 100] })
  @IsOptional()
  @IsAlertThresholds()
  alertThresholds?: number[];
}

/**
 * A rate limit on one key; team admins may set it for their team's keys within the team's limits.
 * The counts and window are the org-level rate limit's fields; only the tool pattern differs (length-capped).
 */
export class CreateKeyRateLimitDto extends PickType(CreateRateLimitDto, [
  'callsPerWindow',
  'windowSeconds',
  'maxConcurrent',
] as const) {
  @ApiPropertyOptional({ default: '*:*', example: 'github:search_*' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  toolPattern?: string;
}
