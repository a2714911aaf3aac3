import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { MAX_FILTER_VALUES, PLATFORM_REPORT_DIMENSIONS, REPORT_DIMENSIONS } from '@tollgate/reporting';
import { IsKeyTag } from '../keys/key-labels.validator';

export const REPORT_FORMATS = ['json', 'csv'] as const;
// 100 tool names of up to 200 characters, and commas; the parser checks each value and the count.
const FILTER_MAX_LENGTH = 20_200;

export class SpendReportQuery {
  @ApiProperty({
    example: '2026-11-01',
    description: 'First day, inclusive (YYYY-MM-DD), in the organization’s time zone',
  })
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'from must be a date YYYY-MM-DD' })
  from!: string;

  @ApiProperty({
    example: '2026-11-30',
    description: 'Last day, inclusive (YYYY-MM-DD), in the organization’s time zone',
  })
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'to must be a date YYYY-MM-DD' })
  to!: string;

  @ApiPropertyOptional({
    example: 'team,day',
    description: `Comma-separated breakdown: ${REPORT_DIMENSIONS.join(', ')}; none gives one total row`,
  })
  @IsOptional()
  @IsString({ message: 'groupBy must be a comma-separated list' })
  @MaxLength(100)
  groupBy?: string;

  @ApiPropertyOptional({
    example: 'project:atlas',
    description: 'Only calls of keys carrying this tag (as the keys carry it now)',
  })
  @IsOptional()
  @IsKeyTag()
  tag?: string;

  @ApiPropertyOptional({
    example: '5f0c8a4e-0a51-4d6c-9a0e-3c2b1d7e9f10',
    description: `Only calls of these teams: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}. A team admin's own team is forced`,
  })
  @IsOptional()
  @IsString({ message: 'teamId must be a comma-separated list of UUIDs' })
  @MaxLength(FILTER_MAX_LENGTH)
  teamId?: string;

  @ApiPropertyOptional({
    description: `Only calls of these users: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}. A member's own user is forced`,
  })
  @IsOptional()
  @IsString({ message: 'userId must be a comma-separated list of UUIDs' })
  @MaxLength(FILTER_MAX_LENGTH)
  userId?: string;

  @ApiPropertyOptional({ description: `Only calls of these keys: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}` })
  @IsOptional()
  @IsString({ message: 'keyId must be a comma-separated list of UUIDs' })
  @MaxLength(FILTER_MAX_LENGTH)
  keyId?: string;

  @ApiPropertyOptional({
    description: `Only calls to these upstream servers: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}`,
  })
  @IsOptional()
  @IsString({ message: 'upstreamId must be a comma-separated list of UUIDs' })
  @MaxLength(FILTER_MAX_LENGTH)
  upstreamId?: string;

  @ApiPropertyOptional({
    example: 'search,fetch',
    description: `Only calls of these tools (names as the upstream has them), at most ${MAX_FILTER_VALUES}; with upstreamId, those upstreams' tools of that name`,
  })
  @IsOptional()
  @IsString({ message: 'tool must be a comma-separated list of tool names' })
  @MaxLength(FILTER_MAX_LENGTH)
  tool?: string;

  @ApiPropertyOptional({ enum: REPORT_FORMATS, description: 'csv, or send Accept: text/csv' })
  @IsOptional()
  @IsIn(REPORT_FORMATS, { message: `format must be one of: ${REPORT_FORMATS.join(', ')}` })
  format?: (typeof REPORT_FORMATS)[number];
}

export class RollupRequestDto {
  @ApiProperty({ example: '2026-11-22', description: 'UTC day to recompute (YYYY-MM-DD)' })
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'day must be a date YYYY-MM-DD' })
  day!: string;
}

export class PlatformSpendReportQuery {
  @ApiProperty({
    example: '2026-11-01',
    description: 'First day, inclusive (YYYY-MM-DD): each organization’s calls count on its own calendar days',
  })
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'from must be a date YYYY-MM-DD' })
  from!: string;

  @ApiProperty({ example: '2026-11-30', description: 'Last day, inclusive (YYYY-MM-DD)' })
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'to must be a date YYYY-MM-DD' })
  to!: string;

  @ApiPropertyOptional({
    example: 'org,day',
    description: `Comma-separated breakdown: ${PLATFORM_REPORT_DIMENSIONS.join(', ')} (default: org)`,
  })
  @IsOptional()
  @IsString({ message: 'groupBy must be a comma-separated list' })
  @MaxLength(20)
  groupBy?: string;
}
