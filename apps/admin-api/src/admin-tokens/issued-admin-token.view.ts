import { ApiProperty } from '@nestjs/swagger';

export class IssuedAdminTokenView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ example: 'tga_Ab3dE9', description: 'The visible start of the token, to tell tokens apart' })
  prefix!: string;
  @ApiProperty({ description: 'The whole token. Shown once: store it now, it cannot be read again.' }) secret!: string;
  @ApiProperty({ enum: ['PLATFORM_ADMIN', 'ORG_ADMIN', 'TEAM_ADMIN', 'FINANCE', 'MEMBER'] }) role!: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) orgId!: string | null;
  @ApiProperty() name!: string;
  @ApiProperty({ nullable: true, type: Date }) expiresAt!: Date | null;
}
