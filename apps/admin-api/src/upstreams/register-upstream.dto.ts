import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { NAMESPACE_PATTERN } from '@tollgate/kernel';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { propertyStack } from '../common/validation/property-stack';
import { IsHeaderRecord } from '../common/validation/string-record.validator';

export const UPSTREAM_TRANSPORTS = ['STDIO', 'STREAMABLE_HTTP', 'SSE'] as const;
export type UpstreamTransportName = (typeof UPSTREAM_TRANSPORTS)[number];

export const UPSTREAM_AUTH_MODES = ['NONE', 'STATIC_SECRET', 'PER_USER_OAUTH'] as const;

/** An upstream endpoint as given at registration or in a PATCH (the outbound rule is checked by the service). */
export function IsUpstreamUrl(): PropertyDecorator {
  return propertyStack(
    IsUrl(
      { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
      { message: 'url must be an http:// or https:// URL' },
    ),
    MaxLength(2000),
  );
}

/** How often the catalog is re-read: a minute to a week. */
export function IsSyncIntervalSeconds(): PropertyDecorator {
  return propertyStack(IsInt(), Min(60), Max(7 * 24 * 3600));
}

export function IsCallTimeoutMs(): PropertyDecorator {
  return propertyStack(IsInt(), Min(100), Max(600_000));
}

export function IsOutputTokenCap(): PropertyDecorator {
  return propertyStack(IsInt(), Min(1), Max(1_000_000));
}

/** PER_USER_OAUTH: a client registered at the upstream's authorization server (else registered dynamically). */
export class UpstreamOAuthDto {
  @ApiPropertyOptional({
    description: 'A pre-registered client id; without it Tollgate registers a client dynamically (RFC 7591)',
  })
  @IsOptional()
  @IsString()
  @Length(1, 500)
  clientId?: string;

  @ApiPropertyOptional({ description: 'Write-only: stored encrypted, never returned' })
  @IsOptional()
  @IsString()
  @Length(1, 2000)
  clientSecret?: string;

  @ApiPropertyOptional({ example: 'repo read:user', description: 'Scope asked for at authorization' })
  @IsOptional()
  @IsString()
  @Length(1, 1000)
  scope?: string;
}

export class RegisterUpstreamDto {
  @ApiProperty({
    example: 'github',
    pattern: NAMESPACE_PATTERN.source,
    description: 'Agents see its tools as <namespace>__<tool>; unique in the org',
  })
  @IsString()
  @Length(1, 40)
  @Matches(NAMESPACE_PATTERN, {
    message:
      'namespace must be lower-case letters and digits, in words joined by single hyphens (e.g. "github", "my-docs")',
  })
  namespace!: string;

  @ApiPropertyOptional({ example: 'GitHub', maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  displayName?: string;

  @ApiProperty({
    enum: UPSTREAM_TRANSPORTS,
    description: 'STDIO runs a command on Tollgate’s hosts (platform admins only by default)',
  })
  @IsIn(UPSTREAM_TRANSPORTS, { message: `transport must be one of: ${UPSTREAM_TRANSPORTS.join(', ')}` })
  transport!: UpstreamTransportName;

  @ApiPropertyOptional({ example: 'npx', description: 'STDIO only: the command to run' })
  @IsOptional()
  @IsString()
  @Length(1, 1000)
  command?: string;

  @ApiPropertyOptional({
    type: [String],
    example: ['-y', '@modelcontextprotocol/server-everything'],
    description: 'STDIO only',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(4000, { each: true })
  args?: string[];

  @ApiPropertyOptional({ example: 'https://mcp.example.com/mcp', description: 'STREAMABLE_HTTP and SSE: the endpoint' })
  @IsOptional()
  @IsUpstreamUrl()
  url?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { Authorization: 'Bearer …' },
    description: 'Extra HTTP headers sent upstream. Write-only: answers show their names, never their values.',
  })
  @IsOptional()
  @IsHeaderRecord()
  headers?: Record<string, string>;

  @ApiPropertyOptional({
    description:
      'Static secret auth: sent as `Authorization: Bearer <value>`. Write-only: stored encrypted, never returned.',
  })
  @IsOptional()
  @IsString()
  @Length(1, 4000)
  bearerToken?: string;

  @ApiPropertyOptional({
    enum: UPSTREAM_AUTH_MODES,
    description:
      'Default: STATIC_SECRET when headers or bearerToken are given, else NONE. PER_USER_OAUTH: each user connects their own account; calls carry their token.',
  })
  @IsOptional()
  @IsIn(UPSTREAM_AUTH_MODES, { message: `authMode must be one of: ${UPSTREAM_AUTH_MODES.join(', ')}` })
  authMode?: (typeof UPSTREAM_AUTH_MODES)[number];

  @ApiPropertyOptional({ type: UpstreamOAuthDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => UpstreamOAuthDto)
  oauth?: UpstreamOAuthDto;

  @ApiPropertyOptional({ default: 3600, minimum: 60, description: 'How often the tool catalog is re-read' })
  @IsOptional()
  @IsSyncIntervalSeconds()
  syncIntervalSeconds?: number;

  @ApiPropertyOptional({ default: 30000, minimum: 100, maximum: 600000 })
  @IsOptional()
  @IsCallTimeoutMs()
  callTimeoutMs?: number;

  @ApiPropertyOptional({
    minimum: 1,
    description: 'Output token cap for this upstream’s results (default: the policy’s)',
  })
  @IsOptional()
  @IsOutputTokenCap()
  outputTokenCap?: number;
}
