import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

export class CreateSessionDto {
  @ApiProperty({
    description: 'The bootstrap token (ADMIN_BOOTSTRAP_TOKEN): a platform admin opens a console session with it',
  })
  @IsString()
  @Length(1, 1000)
  token!: string;
}
