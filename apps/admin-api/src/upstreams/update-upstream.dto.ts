import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { IsHeaderRecord } from '../common/validation/string-record.validator';
import {
  IsCallTimeoutMs,
  IsOutputTokenCap,
  IsSyncIntervalSeconds,
  IsUpstreamUrl,
  UPSTREAM_AUTH_MODES,
} from './register-upstream.dto';

/** PER_USER_OAUTH's client, changed field by field; null clears a field. */
export class UpdateUpstreamOAuthDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description:
      'A pre-registered client id; null: register one dynamically again (RFC 7591). A new id drops the old client’s secret unless clientSecret is given too.',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString({ message: 'oauth.clientId must be a string' })
  @Length(1, 500, { message: 'oauth.clientId must be 1 to 500 characters' })
  clientId?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'Write-only: sealed, never returned; null drops it',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString({ message: 'oauth.clientSecret must be a string' })
  @Length(1, 2000, { message: 'oauth.clientSecret must be 1 to 2000 characters' })
  clientSecret?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, example: 'repo read:user', description: 'null: no scope' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString({ message: 'oauth.scope must be a string' })
  @Length(1, 1000, { message: 'oauth.scope must be 1 to 1000 characters' })
  scope?: string | null;
}

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

  @ApiPropertyOptional({
    enum: UPSTREAM_AUTH_MODES,
    description:
      'NONE (no secret: drop headers and bearer token in the same change), STATIC_SECRET (needs a bearer token or a header), PER_USER_OAUTH (HTTP upstreams; each user connects their own account)',
  })
  @IsOptional()
  @IsIn(UPSTREAM_AUTH_MODES, { message: `authMode must be one of: ${UPSTREAM_AUTH_MODES.join(', ')}` })
  authMode?: (typeof UPSTREAM_AUTH_MODES)[number];

  @ApiPropertyOptional({ type: UpdateUpstreamOAuthDto, description: 'PER_USER_OAUTH only' })
  @IsOptional()
  @ValidateNested()
  @Type(() => UpdateUpstreamOAuthDto)
  oauth?: UpdateUpstreamOAuthDto;
}
