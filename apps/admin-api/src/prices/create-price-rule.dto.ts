import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsISO8601, IsOptional, IsString, IsUUID, Length } from 'class-validator';
import { IsMicros } from '../common/validation/micros.validator';

const MICROS_HELP = 'Integer micro-units (1 USD = 1,000,000); a JSON integer, no fractions';

export class CreatePriceRuleDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'The upstream the rule prices; omitted: every upstream of the org',
  })
  @IsOptional()
  @IsUUID(undefined, { message: 'upstreamId must be a UUID' })
  upstreamId?: string;

  @ApiPropertyOptional({
    default: '*',
    example: 'search_*',
    description: 'Glob over tool names within the upstream; the most specific match wins',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  toolPattern?: string;

  @ApiProperty({ type: 'integer', minimum: 0, example: 2000, description: `Price of each call. ${MICROS_HELP}` })
  @IsMicros()
  perCallMicros!: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    default: 0,
    example: 3,
    description: `Price of each output token. ${MICROS_HELP}`,
  })
  @IsOptional()
  @IsMicros()
  perOutputTokenMicros?: number;

  @ApiPropertyOptional({
    default: false,
    description: 'Add the cost a tool reports in its result _meta, capped by reportedCostCapMicros',
  })
  @IsOptional()
  @IsBoolean()
  acceptReportedCost?: boolean;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    default: 0,
    description: `Most a reported cost may add. ${MICROS_HELP}`,
  })
  @IsOptional()
  @IsMicros()
  reportedCostCapMicros?: number;

  @ApiPropertyOptional({ default: false, description: 'Whether calls that fail upstream are charged' })
  @IsOptional()
  @IsBoolean()
  chargeFailedCalls?: boolean;

  @ApiPropertyOptional({
    example: '2030-01-01T00:00:00Z',
    description: 'When the rule takes effect (default now; never in the past)',
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'effectiveFrom must be an ISO 8601 timestamp' })
  effectiveFrom?: string;
}
