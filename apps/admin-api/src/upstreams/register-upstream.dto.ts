import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { NAMESPACE_PATTERN } from '@tollgate/kernel';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsString, IsUrl, Length, Matches, Max, MaxLength, Min } from 'class-validator';
import { IsHeaderRecord } from '../common/string-record.validator';

export const UPSTREAM_TRANSPORTS = ['STDIO', 'STREAMABLE_HTTP', 'SSE'] as const;
export type UpstreamTransportName = (typeof UPSTREAM_TRANSPORTS)[number];

export class RegisterUpstreamDto {
  @ApiProperty({ example: 'github', pattern: NAMESPACE_PATTERN.source, description: 'Agents see its tools as <namespace>__<tool>; unique in the org' })
  @IsString()
  @Length(1, 40)
  @Matches(NAMESPACE_PATTERN, { message: 'namespace must be lower-case letters and digits, in words joined by single hyphens (e.g. "github", "my-docs")' })
  namespace!: string;

  @ApiPropertyOptional({ example: 'GitHub', maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  displayName?: string;

  @ApiProperty({ enum: UPSTREAM_TRANSPORTS, description: 'STDIO runs a command on Tollgate’s hosts (platform admins only by default)' })
  @IsIn(UPSTREAM_TRANSPORTS, { message: `transport must be one of: ${UPSTREAM_TRANSPORTS.join(', ')}` })
  transport!: UpstreamTransportName;

  @ApiPropertyOptional({ example: 'npx', description: 'STDIO only: the command to run' })
  @IsOptional()
  @IsString()
  @Length(1, 1000)
  command?: string;

  @ApiPropertyOptional({ type: [String], example: ['-y', '@modelcontextprotocol/server-everything'], description: 'STDIO only' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(4000, { each: true })
  args?: string[];

  @ApiPropertyOptional({ example: 'https://mcp.example.com/mcp', description: 'STREAMABLE_HTTP and SSE: the endpoint' })
  @IsOptional()
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false }, { message: 'url must be an http:// or https:// URL' })
  @MaxLength(2000)
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

  @ApiPropertyOptional({ default: 3600, minimum: 60, description: 'How often the tool catalog is re-read' })
  @IsOptional()
  @IsInt()
  @Min(60)
  @Max(7 * 24 * 3600)
  syncIntervalSeconds?: number;

  @ApiPropertyOptional({ default: 30000, minimum: 100, maximum: 600000 })
  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(600_000)
  callTimeoutMs?: number;

  @ApiPropertyOptional({ minimum: 1, description: 'Output token cap for this upstream’s results (default: the policy’s)' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  outputTokenCap?: number;
}
