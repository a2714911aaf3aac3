import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsOptional, IsString, IsUUID, Length } from 'class-validator';

export class EndPriceRuleDto {
  @ApiPropertyOptional({
    example: '2030-01-01T00:00:00Z',
    description: 'From when the rule prices nothing (default now; never in the past)',
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'effectiveUntil must be an ISO 8601 timestamp' })
  effectiveUntil?: string;
}

export class PriceHistoryQuery {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only rules of this upstream' })
  @IsOptional()
  @IsUUID('all', { message: 'upstreamId must be a UUID' })
  upstreamId?: string;

  @ApiPropertyOptional({ example: 'search_*', description: 'Only rules with exactly this tool pattern' })
  @IsOptional()
  @IsString()
  @Length(1, 600)
  toolPattern?: string;
}
