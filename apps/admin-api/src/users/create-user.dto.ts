import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsOptional, IsString, Length, MaxLength } from 'class-validator';

export class CreateUserDto {
  @ApiProperty({ example: 'ada@example.com', description: 'Unique within the organization' })
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(320)
  email!: string;

  @ApiPropertyOptional({ example: 'Ada Lovelace', maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  name?: string;
}
