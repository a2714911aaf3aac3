import { Module } from '@nestjs/common';
import { IdentityModule } from '@tollgate/identity';
import { OAuthGrantKeys } from './oauth-grant-keys.service';
import { OAuthRegistrationLimiter } from './oauth-registration-limiter.service';
import { OidcSignInService } from './oidc-sign-in.service';
import { OrgIdentityProviderService } from './org-identity-provider.service';
import { SignInCodeService } from './sign-in-code.service';

const SERVICES = [
  SignInCodeService,
  OAuthGrantKeys,
  OAuthRegistrationLimiter,
  OrgIdentityProviderService,
  OidcSignInService,
];

@Module({ imports: [IdentityModule], providers: SERVICES, exports: SERVICES })
export class OAuthServerModule {}
