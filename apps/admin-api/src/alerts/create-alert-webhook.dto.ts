import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';

export class CreateAlertWebhookDto {
  @ApiProperty({
    example: 'https://finance.example.com/hooks/tollgate',
    description: 'http(s) URL that receives signed alert POSTs',
  })
  @IsString({ message: 'url must be a string' })
  @MaxLength(2048)
  url!: string;

  @ApiPropertyOptional({ example: 'finance Slack relay' })
  @IsOptional()
  @IsString({ message: 'description must be a string' })
  @MaxLength(200)
  description?: string;
}
