import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, Length } from 'class-validator';
import { DISCLOSURE_MODES, DisclosureModeName } from '@tollgate/kernel';
import { IsFutureIsoDate } from '../common/validation/future-date.validator';
import { IsKeyMetadata, IsKeyTagList } from './key-labels.validator';

export class CreateKeyDto {
  @ApiProperty({ format: 'uuid', description: 'The team the key spends for' })
  @IsUUID(undefined, { message: 'teamId must be a UUID' })
  teamId!: string;

  @ApiProperty({ format: 'uuid', description: 'The key’s owner; must be a member of the team' })
  @IsUUID(undefined, { message: 'userId must be a UUID' })
  userId!: string;

  @ApiProperty({ example: 'claude-code-laptop', maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name!: string;

  @ApiPropertyOptional({ example: '2030-01-01T00:00:00Z', description: 'The key stops working at this time' })
  @IsOptional()
  @IsFutureIsoDate()
  expiresAt?: string;

  @ApiPropertyOptional({
    enum: DISCLOSURE_MODES,
    description: 'How the edge discloses tools to this key (default: the policy’s)',
  })
  @IsOptional()
  @IsIn(DISCLOSURE_MODES, { message: `disclosureMode must be one of: ${DISCLOSURE_MODES.join(', ')}` })
  disclosureMode?: DisclosureModeName;

  @ApiPropertyOptional({
    type: [String],
    example: ['project:atlas', 'env:prod'],
    description: 'Up to 20 short tags; spend reports group and filter by them',
  })
  @IsOptional()
  @IsKeyTagList()
  tags?: string[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { costCentre: 'CC-42' },
    description: 'A free-form JSON object, at most 4 KiB',
  })
  @IsOptional()
  @IsKeyMetadata()
  metadata?: Record<string, unknown>;
}
