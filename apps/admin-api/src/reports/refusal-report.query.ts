import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { MAX_FILTER_VALUES, REFUSAL_DIMENSIONS } from '@tollgate/reporting';
import { ListFilterParam, ReportDaysQuery } from './report-query';

export class RefusalReportQuery extends ReportDaysQuery {
  @ApiPropertyOptional({
    example: 'key,code',
    description: `Comma-separated breakdown: ${REFUSAL_DIMENSIONS.join(', ')}; none gives the total alone`,
  })
  @IsOptional()
  @IsString({ message: 'groupBy must be a comma-separated list' })
  @MaxLength(100)
  groupBy?: string;

  @ListFilterParam({
    description: `Only refusals of these teams: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}. A team admin's own team is forced`,
  })
  teamId?: string;

  @ListFilterParam({
    description: `Only refusals of these users: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}. A member's own user is forced`,
  })
  userId?: string;

  @ListFilterParam({
    description: `Only refusals of these keys: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}`,
  })
  keyId?: string;

  @ListFilterParam(
    {
      description:
        'Only refusals of these tools: comma-separated names (the tool’s own name; the name the agent called when the tool is unknown)',
    },
    'tool names',
  )
  tool?: string;

  @ListFilterParam(
    { example: 'BUDGET_EXCEEDED,RATE_LIMITED', description: 'Only these refusal codes, comma-separated' },
    'refusal codes',
    2_000,
  )
  code?: string;
}
