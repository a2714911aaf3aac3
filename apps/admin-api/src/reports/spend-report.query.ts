import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import {
  DEFAULT_REPORT_TOP,
  MAX_FILTER_VALUES,
  MAX_REPORT_PAGE,
  MAX_REPORT_ROWS,
  PLATFORM_REPORT_DIMENSIONS,
  REPORT_DIMENSIONS,
  REPORT_METRICS,
} from '@tollgate/reporting';
import { IsKeyTag } from '../keys/key-labels.validator';
import { ListFilterParam, ReportDaysQuery } from './report-query';

export const REPORT_FORMATS = ['json', 'csv'] as const;

export class SpendReportQuery extends ReportDaysQuery {
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

  @ListFilterParam({
    example: '5f0c8a4e-0a51-4d6c-9a0e-3c2b1d7e9f10',
    description: `Only calls of these teams: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}. A team admin's own team is forced`,
  })
  teamId?: string;

  @ListFilterParam({
    description: `Only calls of these users: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}. A member's own user is forced`,
  })
  userId?: string;

  @ListFilterParam({ description: `Only calls of these keys: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}` })
  keyId?: string;

  @ListFilterParam({
    description: `Only calls to these upstream servers: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}`,
  })
  upstreamId?: string;

  @ListFilterParam(
    {
      example: 'search,fetch',
      description: `Only calls of these tools (names as the upstream has them), at most ${MAX_FILTER_VALUES}; with upstreamId, those upstreams' tools of that name`,
    },
    'tool names',
  )
  tool?: string;

  @ApiPropertyOptional({
    example: 'costMicros:desc',
    description: `Order of the rows: <column>:asc or <column>:desc, the column a breakdown asked for or one of ${REPORT_METRICS.join(', ')} (text by its name, figures as integers; ties keep the report's order). With two breakdowns or more the groups of the first follow it (by their subtotal on a figure)`,
  })
  @IsOptional()
  @IsString({ message: 'sort must be <column>:asc or <column>:desc' })
  @MaxLength(40)
  sort?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_REPORT_PAGE,
    description:
      'Lines per page: the answer carries that page of the table (rows, and the subtotal lines of the first breakdown with two or more), `page` with the counts, and `perDay` for a breakdown by day. Absent: the JSON answer, bounded by `top` (the CSV is always every row)',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(MAX_REPORT_PAGE)
  limit?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_REPORT_ROWS,
    default: DEFAULT_REPORT_TOP,
    description: `Without limit (the JSON answer): at most this many rows, the costliest (ties: more calls first), in the report's order; the rows left out are summed in \`remainder\` and \`truncated\` is true, so rows plus remainder are the whole report. Not with limit (a page is already bounded); the CSV is always every row`,
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'top must be a whole number' })
  @Min(1)
  @Max(MAX_REPORT_ROWS)
  top?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, default: 0, description: 'Lines skipped before the page' })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'offset must be a whole number' })
  @Min(0)
  offset?: number;

  @ApiPropertyOptional({ enum: REPORT_FORMATS, description: 'csv, or send Accept: text/csv' })
  @IsOptional()
  @IsIn(REPORT_FORMATS, { message: `format must be one of: ${REPORT_FORMATS.join(', ')}` })
  format?: (typeof REPORT_FORMATS)[number];
}

export class RollupRequestDto {
  @ApiPropertyOptional({
    example: '2026-11-22',
    description:
      'The day whose rollups are rebuilt (YYYY-MM-DD: the org’s local day in spend reports, the UTC day in tool scores); absent: every day',
  })
  @IsOptional()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'day must be a date YYYY-MM-DD' })
  day?: string;
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
