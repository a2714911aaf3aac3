import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsEmail, IsOptional, IsString, IsUUID, Length, MaxLength } from 'class-validator';

export class UpdateUserDto {
  @ApiPropertyOptional({
    example: 'Ada King',
    maxLength: 200,
    nullable: true,
    type: String,
    description: 'null clears the name',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  name?: string | null;

  @ApiPropertyOptional({ example: 'ada.king@example.com', description: 'Unique within the organization' })
  @IsOptional()
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(320)
  email?: string;
}

export class MoveUserDto {
  @ApiProperty({ format: 'uuid', description: 'The team the user leaves' })
  @IsUUID(undefined, { message: 'fromTeamId must be a UUID' })
  fromTeamId!: string;

  @ApiProperty({ format: 'uuid', description: 'The team the user joins' })
  @IsUUID(undefined, { message: 'toTeamId must be a UUID' })
  toTeamId!: string;

  @ApiPropertyOptional({ description: 'Whether they administer the new team (default: no, or as they already do)' })
  @IsOptional()
  @IsBoolean()
  isTeamAdmin?: boolean;

  @ApiPropertyOptional({
    default: true,
    description: 'Move their live keys to the new team (true) or revoke them (false)',
  })
  @IsOptional()
  @IsBoolean()
  moveKeys?: boolean;
}
