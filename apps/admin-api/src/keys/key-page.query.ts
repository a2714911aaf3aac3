import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { KEY_SORT_COLUMNS } from '@tollgate/identity';

/** The most keys one page answers. */
export const MAX_KEY_PAGE = 200;

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const KEY_IDS_PATTERN = new RegExp(`^${UUID}(,${UUID}){0,${MAX_KEY_PAGE - 1}}$`);

/** A page of the key list: a search, a tag, revoked and expired keys or not, and where the page starts. */
export class KeyPageQuery {
  @ApiPropertyOptional({
    description: 'Matches name, prefix, a tag, the OAuth client, the team’s name or the owner’s name or email',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;

  @ApiPropertyOptional({ description: 'Only keys carrying this tag' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  tag?: string;

  @ApiPropertyOptional({ type: Boolean, default: false, description: 'Include revoked and expired keys' })
  @IsOptional()
  @Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean({ message: 'inactive must be true or false' })
  inactive?: boolean;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_KEY_PAGE, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(MAX_KEY_PAGE)
  limit?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, default: 0 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'offset must be a whole number' })
  @Min(0)
  @Max(1_000_000)
  offset?: number;

  @ApiPropertyOptional({
    pattern: `^(${KEY_SORT_COLUMNS.join('|')}):(asc|desc)$`,
    example: 'lastUsedAt:desc',
    description:
      'Order of the whole list before paging: `<column>:asc|desc`, a column of ' +
      KEY_SORT_COLUMNS.join(', ') +
      ' (empty times last either way; ties oldest first). Default: oldest first (createdAt:asc)',
  })
  @IsOptional()
  @Matches(new RegExp(`^(${KEY_SORT_COLUMNS.join('|')}):(asc|desc)$`), {
    message: `sort must be <column>:asc or <column>:desc, a column of ${KEY_SORT_COLUMNS.join(', ')}`,
  })
  sort?: string;

  @ApiPropertyOptional({
    example: '5f0c8a4e-0a51-4d6c-9a0e-3c2b1d7e9f10,0b7e4c1a-3f2d-4e5a-8b6c-7d8e9f0a1b2c',
    description: `Only these keys: comma-separated UUIDs, at most ${MAX_KEY_PAGE}. Names the keys a page shows (a budget's, a step's) without listing the org's; with inactive=true, revoked and expired ones too`,
  })
  @IsOptional()
  @IsString({ message: 'ids must be a comma-separated list of UUIDs' })
  @Matches(KEY_IDS_PATTERN, { message: `ids must be comma-separated UUIDs, at most ${MAX_KEY_PAGE}` })
  ids?: string;
}
