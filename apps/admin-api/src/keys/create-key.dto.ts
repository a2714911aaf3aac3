import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, Length } from 'class-validator';
import { IsFutureIsoDate } from '../common/future-date.validator';

export const DISCLOSURE_MODES = ['FULL', 'PROGRESSIVE', 'CODE', 'AUTO'] as const;
export type DisclosureModeName = (typeof DISCLOSURE_MODES)[number];

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

  @ApiPropertyOptional({ enum: DISCLOSURE_MODES, description: 'How the edge discloses tools to this key (default: the policy’s)' })
  @IsOptional()
  @IsIn(DISCLOSURE_MODES, { message: `disclosureMode must be one of: ${DISCLOSURE_MODES.join(', ')}` })
  disclosureMode?: DisclosureModeName;
}
