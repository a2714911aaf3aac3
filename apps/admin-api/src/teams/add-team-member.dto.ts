import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsUUID } from 'class-validator';

export class AddTeamMemberDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID(undefined, { message: 'userId must be a UUID' })
  userId!: string;

  @ApiPropertyOptional({ default: false })
  @IsOptional()
  @IsBoolean()
  isTeamAdmin?: boolean;
}
