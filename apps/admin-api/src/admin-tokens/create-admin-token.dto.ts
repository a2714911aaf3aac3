import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, Length } from 'class-validator';
import { IsFutureIsoDate, OptionalExpiresAt } from '../common/validation/future-date.validator';
import { AdminRole } from './admin-token-grant';

export const ADMIN_ROLES: readonly AdminRole[] = ['PLATFORM_ADMIN', 'ORG_ADMIN', 'TEAM_ADMIN', 'FINANCE', 'MEMBER'];

export class CreateAdminTokenDto {
  @ApiProperty({ enum: ADMIN_ROLES, example: 'ORG_ADMIN' })
  @IsIn(ADMIN_ROLES, { message: `role must be one of: ${ADMIN_ROLES.join(', ')}` })
  role!: AdminRole;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'Required for every role but PLATFORM_ADMIN when a platform admin issues; an org admin’s own org by default',
  })
  @IsOptional()
  @IsUUID(undefined, { message: 'orgId must be a UUID' })
  orgId?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'The team a TEAM_ADMIN token acts for (required for TEAM_ADMIN): it manages that team’s keys',
  })
  @IsOptional()
  @IsUUID(undefined, { message: 'teamId must be a UUID' })
  teamId?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'The user a MEMBER (or TEAM_ADMIN) token acts for (required for MEMBER): a member manages that user’s keys and connections',
  })
  @IsOptional()
  @IsUUID(undefined, { message: 'userId must be a UUID' })
  userId?: string;

  @ApiProperty({ example: 'ci-pipeline', maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name!: string;

  @ApiPropertyOptional({
    example: 'ci-pipeline (team platform)',
    maxLength: 200,
    description: 'Who holds the token when it names no user (a service, a pipeline)',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  ownerLabel?: string;

  @ApiPropertyOptional({ example: '2030-01-01T00:00:00Z', description: 'The token stops working at this time' })
  @IsOptional()
  @IsFutureIsoDate()
  expiresAt?: string;
}

export class UpdateAdminTokenDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  name?: string;

  @ApiPropertyOptional({
    maxLength: 200,
    nullable: true,
    type: String,
    description: 'Who holds the token; null clears it',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  ownerLabel?: string | null;

  @OptionalExpiresAt()
  expiresAt?: string | null;
}

export class ListAdminTokensQuery {
  @ApiPropertyOptional({ format: 'uuid', description: 'Platform admins: only this organization’s tokens' })
  @IsOptional()
  @IsUUID(undefined, { message: 'orgId must be a UUID' })
  orgId?: string;

  @ApiPropertyOptional({ enum: ['true', 'false'], default: 'false', description: 'Also list revoked tokens' })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'includeRevoked must be true or false' })
  includeRevoked?: 'true' | 'false';
}
