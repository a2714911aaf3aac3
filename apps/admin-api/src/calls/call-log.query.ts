import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { CALL_OUTCOMES, MAX_CALL_PAGE, MAX_FILTER_VALUES } from '@tollgate/reporting';
import { ListFilterParam, ReportDaysQuery } from '../reports/report-query';

/** The per-call log's filters and page; every filter given must match (AND), values of one OR. */
export class CallLogQuery extends ReportDaysQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_CALL_PAGE, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(MAX_CALL_PAGE)
  limit?: number;

  @ApiPropertyOptional({ description: 'The nextCursor of the previous page' })
  @IsOptional()
  @IsString({ message: 'cursor must be a cursor this API returned' })
  @MaxLength(400)
  cursor?: string;

  @ListFilterParam({
    description: `Teams: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}. A team admin's own team is forced`,
  })
  teamId?: string;

  @ListFilterParam({
    description: `Users: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}. A member's own user is forced`,
  })
  userId?: string;

  @ListFilterParam({ description: `Keys: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}` })
  keyId?: string;

  @ListFilterParam(
    { description: 'Tools: comma-separated names (the tool’s own name, as in the spend reports)' },
    'tool names',
  )
  tool?: string;

  @ListFilterParam(
    { example: 'REFUSED', description: `Outcomes, comma-separated: ${CALL_OUTCOMES.join(', ')}` },
    'outcomes',
    200,
  )
  outcome?: string;

  @ListFilterParam(
    {
      example: 'BUDGET_EXCEEDED',
      description: 'Refusal codes, comma-separated (only refused calls have one: a code keeps refusals only)',
    },
    'refusal codes',
    2_000,
  )
  code?: string;
}
