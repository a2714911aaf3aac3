import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';

const SHA256_HEX = /^[0-9a-f]{64}$/;
export const REVIEW_DECISIONS = ['APPROVE', 'REJECT'] as const;

export class ToolDecisionDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'toolId must be a UUID' })
  toolId!: string;

  @ApiProperty({ enum: REVIEW_DECISIONS })
  @IsIn(REVIEW_DECISIONS, { message: `decision must be one of: ${REVIEW_DECISIONS.join(', ')}` })
  decision!: (typeof REVIEW_DECISIONS)[number];

  @ApiProperty({
    description:
      'The definitionHash the reviewer looked at; an item whose tool changed since is STALE and left as it is',
  })
  @Matches(SHA256_HEX, { message: 'definitionHash must be the 64-character hex SHA-256 from the diff' })
  definitionHash!: string;
}

/** Many review decisions in one request; each is checked and applied on its own. */
export class BulkReviewDto {
  @ApiProperty({ type: [ToolDecisionDto], maxItems: 500 })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(500)
  @ValidateNested({ each: true })
  @Type(() => ToolDecisionDto)
  decisions!: ToolDecisionDto[];

  @ApiPropertyOptional({ description: 'Why; kept in the audit trail of each decision' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  reason?: string;
}

export class ToolDecisionResultView {
  @ApiProperty({ format: 'uuid' }) toolId!: string;
  @ApiProperty({ enum: REVIEW_DECISIONS }) decision!: string;
  @ApiProperty({
    enum: ['APPLIED', 'STALE', 'NOT_FOUND'],
    description:
      'STALE: the definition changed since it was reviewed (look at the diff again); nothing was changed for that tool',
  })
  result!: 'APPLIED' | 'STALE' | 'NOT_FOUND';
  @ApiProperty({ nullable: true, type: String, description: 'The tool’s current definitionHash' }) definitionHash!:
    string | null;
  @ApiProperty({ nullable: true, type: String }) pinnedHash!: string | null;
  @ApiProperty({ nullable: true, type: String }) message!: string | null;
}

export class BulkReviewView {
  @ApiProperty() applied!: number;
  @ApiProperty() stale!: number;
  @ApiProperty() notFound!: number;
  @ApiProperty({ type: [ToolDecisionResultView] }) results!: ToolDecisionResultView[];
}
