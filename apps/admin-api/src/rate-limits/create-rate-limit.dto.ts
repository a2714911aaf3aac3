import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional, IsString, IsUUID, Max, Min } from 'class-validator';
import { TENANT_LEVELS } from '@tollgate/kernel';

/** Calls per window and/or concurrent calls for one level (org, team, user, key) and tool pattern. */
export class CreateRateLimitDto {
  @ApiProperty({ enum: TENANT_LEVELS })
  @IsIn(TENANT_LEVELS, { message: `scope must be one of: ${TENANT_LEVELS.join(', ')}` })
  scope!: (typeof TENANT_LEVELS)[number];

  @ApiProperty({ format: 'uuid', description: 'The team, user or key id; the org id for ORG' })
  @IsUUID(undefined, { message: 'scopeId must be a UUID' })
  scopeId!: string;

  @ApiPropertyOptional({
    default: '*:*',
    example: 'github:search_*',
    description: 'namespace:tool glob the limit counts',
  })
  @IsOptional()
  @IsString()
  toolPattern?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, example: 60 })
  @IsOptional()
  @IsInt({ message: 'callsPerWindow must be an integer' })
  @Min(1)
  @Max(1_000_000)
  callsPerWindow?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, default: 60, description: 'Sliding window length in seconds' })
  @IsOptional()
  @IsInt({ message: 'windowSeconds must be an integer' })
  @Min(1)
  @Max(86_400)
  windowSeconds?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, example: 4 })
  @IsOptional()
  @IsInt({ message: 'maxConcurrent must be an integer' })
  @Min(1)
  @Max(10_000)
  maxConcurrent?: number;
}
