import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { MAX_AUDIT_PAGE } from './audit.service';

// One action (`key.created`), a prefix (`key.*`), or `*`; comma-separated.
const ACTION_LIST = /^(?:[A-Za-z0-9_.-]+\*?|\*)(?:,(?:[A-Za-z0-9_.-]+\*?|\*))*$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The filters of the audit trail, and the page size; every filter given must match (AND). */
export class ListAuditQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_AUDIT_PAGE, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(MAX_AUDIT_PAGE)
  limit?: number;

  @ApiPropertyOptional({
    example: 'key.*,policy.patched',
    description: 'Actions, comma-separated: exact (`policy.patched`) or a prefix ending in `*` (`key.*`)',
  })
  @IsOptional()
  @IsString({ message: 'action must be a comma-separated list of actions' })
  @MaxLength(500)
  @Matches(ACTION_LIST, {
    message: 'action must be a comma-separated list of actions (letters, digits, . _ -), each may end in *',
  })
  action?: string;

  @ApiPropertyOptional({
    example: '6f1c2a7e-0d3b-4c59-9e1a-3b5d7f9a1c2e',
    description:
      'Who: a person’s user id (any token naming them, SSO sessions included) or an admin token id (`bootstrap` for the bootstrap token)',
  })
  @IsOptional()
  @IsString({ message: 'actor must be a user id or an admin token id' })
  @Matches(/^[A-Za-z0-9_:.@-]{1,200}$/, { message: 'actor must be a user id or an admin token id' })
  actor?: string;

  @ApiPropertyOptional({ example: 'virtual-key', description: 'The kind of thing changed, exactly' })
  @IsOptional()
  @IsString({ message: 'targetType must be a text' })
  @Matches(/^[A-Za-z0-9_.-]{1,100}$/, { message: 'targetType must be letters, digits, . _ or - (at most 100)' })
  targetType?: string;

  @ApiPropertyOptional({ description: 'The id of the thing changed, exactly' })
  @IsOptional()
  @IsString({ message: 'targetId must be a text' })
  @MaxLength(200)
  // Postgres text cannot hold NUL (a 500), and no target id holds a control character.
  @Matches(/^[^\u0000-\u001f\u007f]*$/, { message: 'targetId must not contain control characters' })
  targetId?: string;

  @ApiPropertyOptional({
    example: '2026-11-01',
    description: 'First day, inclusive (YYYY-MM-DD), in the organization’s time zone (as the spend reports count)',
  })
  @IsOptional()
  @IsString({ message: 'from must be a date YYYY-MM-DD' })
  @Matches(DAY, { message: 'from must be a date YYYY-MM-DD' })
  from?: string;

  @ApiPropertyOptional({
    example: '2026-11-30',
    description: 'Last day, inclusive (YYYY-MM-DD), in the organization’s time zone',
  })
  @IsOptional()
  @IsString({ message: 'to must be a date YYYY-MM-DD' })
  @Matches(DAY, { message: 'to must be a date YYYY-MM-DD' })
  to?: string;
}
