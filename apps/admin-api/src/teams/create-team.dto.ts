import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

export class CreateTeamDto {
  @ApiProperty({ example: 'platform', maxLength: 100, description: 'Unique within the organization' })
  @IsString()
  @Length(1, 100)
  name!: string;
}
