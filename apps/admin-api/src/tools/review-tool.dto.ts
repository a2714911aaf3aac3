import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';

const SHA256_HEX = /^[0-9a-f]{64}$/;

export class ApproveToolDto {
  @ApiProperty({
    description: 'The definitionHash the reviewer looked at (from the diff); 409 if the upstream changed it since',
  })
  @Matches(SHA256_HEX, { message: 'definitionHash must be the 64-character hex SHA-256 from the diff' })
  definitionHash!: string;

  @ApiPropertyOptional({ description: 'Why; kept in the audit trail' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  reason?: string;
}

export class RejectToolDto {
  @ApiPropertyOptional({ description: 'The definitionHash being rejected; 409 if the upstream changed it since' })
  @IsOptional()
  @Matches(SHA256_HEX, { message: 'definitionHash must be the 64-character hex SHA-256 from the diff' })
  definitionHash?: string;

  @ApiPropertyOptional({ description: 'Why; kept in the audit trail' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  reason?: string;
}
