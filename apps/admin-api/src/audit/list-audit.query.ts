import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { MAX_AUDIT_PAGE } from './audit.service';

export class ListAuditQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_AUDIT_PAGE, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(MAX_AUDIT_PAGE)
  limit?: number;
}
