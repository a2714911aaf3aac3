import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { ListAuditQuery } from './list-audit.query';

/** The audit filters, and where the previous page ended. */
export class SearchAuditQuery extends ListAuditQuery {
  @ApiPropertyOptional({
    description: 'The `nextCursor` of the previous page, with the same filters; absent for the first page',
  })
  @IsOptional()
  @IsString({ message: 'cursor must be the nextCursor of a previous page' })
  @MaxLength(200)
  cursor?: string;
}
