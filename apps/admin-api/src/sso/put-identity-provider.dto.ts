import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, IsUrl, IsUUID, Length, Matches, MaxLength } from 'class-validator';

export class PutIdentityProviderDto {
  @ApiProperty({
    example: 'https://login.example.com',
    description: 'The OpenID Connect issuer (its /.well-known/openid-configuration is read)',
  })
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'issuer must be an http:// or https:// URL' },
  )
  @MaxLength(2000)
  issuer!: string;

  @ApiProperty({ example: 'tollgate' })
  @IsString()
  @Length(1, 500)
  clientId!: string;

  @ApiPropertyOptional({
    description: 'Required the first time; kept encrypted and never shown again. Omit to keep the stored one.',
  })
  @IsOptional()
  @IsString()
  @Length(1, 2000)
  clientSecret?: string;

  @ApiPropertyOptional({
    example: 'email',
    description: 'The ID-token claim with the email users are matched by (`email` also needs `email_verified: true`)',
  })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9_.:/-]{1,200}$/, { message: 'emailClaim must be a claim name' })
  emailClaim?: string;

  @ApiPropertyOptional({
    default: false,
    description:
      'Create a person the provider vouches for but Tollgate does not know, on first sign-in (needs newUserTeamId)',
  })
  @IsOptional()
  @IsBoolean()
  createUsers?: boolean;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The team people created on first sign-in join, as members',
  })
  @IsOptional()
  @IsUUID('all', { message: 'newUserTeamId must be a UUID' })
  newUserTeamId?: string | null;
}
