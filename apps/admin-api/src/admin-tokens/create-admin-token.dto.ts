import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, Length } from 'class-validator';
import { AdminRole } from './admin-token-grant';

export const ADMIN_ROLES: readonly AdminRole[] = ['PLATFORM_ADMIN', 'ORG_ADMIN', 'TEAM_ADMIN', 'FINANCE', 'MEMBER'];

export class CreateAdminTokenDto {
  @ApiProperty({ enum: ADMIN_ROLES, example: 'ORG_ADMIN' })
  @IsIn(ADMIN_ROLES, { message: `role must be one of: ${ADMIN_ROLES.join(', ')}` })
  role!: AdminRole;

  @ApiPropertyOptional({ format: 'uuid', description: 'Required for every role but PLATFORM_ADMIN when a platform admin issues; an org admin’s own org by default' })
  @IsOptional()
  @IsUUID(undefined, { message: 'orgId must be a UUID' })
  orgId?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'The team a TEAM_ADMIN token acts for (required for TEAM_ADMIN): it manages that team’s keys' })
  @IsOptional()
  @IsUUID(undefined, { message: 'teamId must be a UUID' })
  teamId?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'The user a MEMBER (or TEAM_ADMIN) token acts for (required for MEMBER): a member manages that user’s keys and connections' })
  @IsOptional()
  @IsUUID(undefined, { message: 'userId must be a UUID' })
  userId?: string;

  @ApiProperty({ example: 'ci-pipeline', maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name!: string;
}
