import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean, IsString, Length } from 'class-validator';

export class RenameTeamDto {
  @ApiProperty({ example: 'platform-eng', maxLength: 100, description: 'Unique within the organization' })
  @IsString()
  @Length(1, 100)
  name!: string;
}

export class UpdateTeamMemberDto {
  @ApiProperty({
    description:
      'Whether the member administers the team; a demoted admin’s TEAM_ADMIN tokens for the team are revoked',
  })
  @IsBoolean()
  isTeamAdmin!: boolean;
}
