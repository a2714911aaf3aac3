import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsUUID } from 'class-validator';

export const TOOL_REVIEW_STATUSES = ['APPROVED', 'PENDING', 'REJECTED'] as const;

export class ListToolsQuery {
  @ApiPropertyOptional({
    enum: TOOL_REVIEW_STATUSES,
    description: 'Only tools in this review state (PENDING: waiting for a decision)',
  })
  @IsOptional()
  @IsIn(TOOL_REVIEW_STATUSES, { message: `reviewStatus must be one of ${TOOL_REVIEW_STATUSES.join(', ')}` })
  reviewStatus?: (typeof TOOL_REVIEW_STATUSES)[number];

  @ApiPropertyOptional({ format: 'uuid', description: 'Only tools of this upstream' })
  @IsOptional()
  @IsUUID('all', { message: 'upstreamId must be a UUID' })
  upstreamId?: string;

  @ApiPropertyOptional({ type: Boolean, default: false, description: 'Include tools the upstream no longer lists' })
  @IsOptional()
  @Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean({ message: 'includeRemoved must be true or false' })
  includeRemoved?: boolean;
}
