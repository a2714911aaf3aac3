import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsOptional, IsString, Length, Matches, ValidateIf } from 'class-validator';
import { IsHeaderRecord } from '../common/string-record.validator';
import { IsCallTimeoutMs, IsOutputTokenCap, IsSyncIntervalSeconds, IsUpstreamUrl } from './register-upstream.dto';

/** A PATCH of an upstream: only the fields present change. Secrets stay write-only. */
export class UpdateUpstreamDto {
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200 })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @Length(1, 200)
  displayName?: string | null;

  @ApiPropertyOptional({
    example: 'https://mcp.example.com/mcp',
    description: 'STREAMABLE_HTTP and SSE: the new endpoint, checked by the outbound rule like at registration',
  })
  @IsOptional()
  @IsUpstreamUrl()
  url?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'X-Api-Key': '…' },
    description: 'Headers set or replaced by name (the others are kept). Write-only: answers show their names only.',
  })
  @IsOptional()
  @IsHeaderRecord()
  headers?: Record<string, string>;

  @ApiPropertyOptional({ type: [String], example: ['X-Old-Key'], description: 'Header names to drop' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @Matches(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, { each: true, message: 'removeHeaders must hold HTTP header names' })
  removeHeaders?: string[];

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description:
      'Rotates the static secret (`Authorization: Bearer <value>`): the next call on every edge uses it. null drops it. Write-only.',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @Length(1, 4000)
  bearerToken?: string | null;

  @ApiPropertyOptional({
    minimum: 60,
    maximum: 604800,
    description: 'How often the catalog is re-read; the job scheduler is updated at once',
  })
  @IsOptional()
  @IsSyncIntervalSeconds()
  syncIntervalSeconds?: number;

  @ApiPropertyOptional({ minimum: 100, maximum: 600000 })
  @IsOptional()
  @IsCallTimeoutMs()
  callTimeoutMs?: number;

  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 1, description: 'null: the policy’s cap' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsOutputTokenCap()
  outputTokenCap?: number | null;

  @ApiPropertyOptional({
    type: Boolean,
    nullable: true,
    description:
      'Review settings: true serves new or changed tools at once, false holds them for review, null follows the organization’s autoApproveTools',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsBoolean()
  autoApproveTools?: boolean | null;
}
