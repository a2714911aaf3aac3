import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { TRAIL_KINDS } from '@tollgate/kernel';
import { MAX_FILTER_VALUES, MAX_TRAIL_PAGE } from '@tollgate/reporting';
import { ListFilterParam } from '../reports/report-query';

/** The trail's filters (every one given must match; values of one OR) and the page. */
export class TrailExportQuery {
  @ApiPropertyOptional({ description: 'One MCP session (its Mcp-Session-Id), oldest step first' })
  @IsOptional()
  @IsString({ message: 'sessionId must be a session id' })
  @Matches(/^[\x21-\x7e]{1,200}$/, { message: 'sessionId must be a session id (printable, at most 200 characters)' })
  sessionId?: string;

  @ListFilterParam({
    description: `Teams: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}. A team admin's own team is forced`,
  })
  teamId?: string;

  @ListFilterParam({
    description: `Users: comma-separated UUIDs, at most ${MAX_FILTER_VALUES}. A member's own user is forced`,
  })
  userId?: string;

  @ListFilterParam({ description: `Keys (a key's trail across its sessions): comma-separated UUIDs` })
  keyId?: string;

  @ListFilterParam(
    { example: 'SEARCH,CALL', description: `Kinds, comma-separated: ${TRAIL_KINDS.join(', ')}` },
    'kinds',
    400,
  )
  kind?: string;

  @ApiPropertyOptional({ example: '2026-11-26T08:00:00Z', description: 'From this instant (inclusive), ISO 8601' })
  @IsOptional()
  @IsString({ message: 'from must be an ISO 8601 date-time' })
  @MaxLength(40)
  from?: string;

  @ApiPropertyOptional({ example: '2026-11-26T09:00:00Z', description: 'Until this instant (exclusive), ISO 8601' })
  @IsOptional()
  @IsString({ message: 'to must be an ISO 8601 date-time' })
  @MaxLength(40)
  to?: string;
}

export class TrailQuery extends TrailExportQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_TRAIL_PAGE, default: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(MAX_TRAIL_PAGE)
  limit?: number;

  @ApiPropertyOptional({ description: 'The nextCursor of the previous page' })
  @IsOptional()
  @IsString({ message: 'cursor must be a cursor this API returned' })
  @MaxLength(400)
  cursor?: string;
}
