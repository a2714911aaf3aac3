import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { TRAIL_MODES, TrailMode } from '@tollgate/kernel';
import { IsIanaTimeZone } from '../common/validation/time-zone.validator';
import { OptionalOrgCurrency } from './create-org.dto';

export class UpdateOrgDto {
  @ApiPropertyOptional({ example: 'Acme Corporation', maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  name?: string;

  @ApiPropertyOptional({
    example: 'Asia/Tokyo',
    description:
      'An IANA time zone. Budget periods running at the change keep their bounds; the next period starts where each ends and ends on the new zone’s calendar. Report days follow the new zone',
  })
  @IsOptional()
  @IsIanaTimeZone()
  timeZone?: string;

  @OptionalOrgCurrency()
  currency?: string;

  @ApiPropertyOptional({
    description: 'Serve new or changed tool definitions at once (true) or hold them for review (false)',
  })
  @IsOptional()
  @IsBoolean()
  autoApproveTools?: boolean;

  @ApiPropertyOptional({
    enum: TRAIL_MODES,
    description:
      'What is kept of agents’ trails (what they were shown and did): OFF nothing; METADATA (the default) steps, names, sizes, catalog versions and ledger links, no arguments, results or script text; FULL those too, scrubbed of anything secret-looking. Edges follow within a second',
  })
  @IsOptional()
  @IsIn(TRAIL_MODES, { message: `trailMode must be one of: ${TRAIL_MODES.join(', ')}` })
  trailMode?: TrailMode;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 3650,
    description: 'Days a trail step is kept; the worker deletes older ones every 10 minutes',
  })
  @IsOptional()
  @IsInt({ message: 'trailRetentionDays must be a whole number of days' })
  @Min(1)
  @Max(3650)
  trailRetentionDays?: number;
}

export const ORG_DELETION_MODES = ['keep', 'purge'] as const;

export class DeleteOrgQuery {
  @ApiPropertyOptional({
    enum: ORG_DELETION_MODES,
    description:
      'keep: hide the organization and keep its data; purge: delete its data (the usage ledger, rollups and audit trail stay for finance)',
  })
  @IsIn(ORG_DELETION_MODES, { message: `data must be one of: ${ORG_DELETION_MODES.join(', ')}` })
  data!: (typeof ORG_DELETION_MODES)[number];
}
