import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { SIGN_IN_CODE_MAX_TTL_SECONDS } from '@tollgate/sso';

export class IssueSignInCodeDto {
  @ApiPropertyOptional({
    example: 86400,
    minimum: 60,
    maximum: SIGN_IN_CODE_MAX_TTL_SECONDS,
    description: 'How long the code works (default one day)',
  })
  @IsOptional()
  @IsInt()
  @Min(60)
  @Max(SIGN_IN_CODE_MAX_TTL_SECONDS)
  ttlSeconds?: number;
}
