import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { parseFilterList } from '@tollgate/reporting';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';

// 100 tool names of up to 200 characters, and commas; the parser checks each value and the count.
const FILTER_MAX_LENGTH = 20_200;

/** The calendar days an org report or the call log covers (the spend and refusal reports, the call log). */
export class ReportDaysQuery {
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
}

/**
 * An optional comma-separated filter parameter (`teamId=a,b`): a bounded string here; the
 * controller's parser (parseFilterList, parseCodeList …) checks each value and the count.
 */
export function ListFilterParam(
  api: ApiPropertyOptions,
  items = 'UUIDs',
  maxLength = FILTER_MAX_LENGTH,
): PropertyDecorator {
  return (target, key) =>
    // Applied in this order, as stacked decorators apply bottom-up (the 400 lists the length first).
    applyDecorators(
      MaxLength(maxLength),
      IsString({ message: `${String(key)} must be a comma-separated list of ${items}` }),
      IsOptional(),
      ApiPropertyOptional(api),
    )(target, key);
}

/**
 * Whose calls a report or the call log is narrowed to (`teamId`, `userId`, `keyId`), each list
 * checked in that order (a 400 names the first field at fault).
 */
export function callerFilters(query: { teamId?: string; userId?: string; keyId?: string }) {
  return {
    teamId: parseFilterList(query.teamId, 'teamId'),
    userId: parseFilterList(query.userId, 'userId'),
    keyId: parseFilterList(query.keyId, 'keyId'),
  };
}
