import { Module } from '@nestjs/common';
import { IdentityModule } from '@tollgate/identity';
import { OidcSignInService } from './oidc-sign-in.service';
import { OrgIdentityProviderService } from './org-identity-provider.service';
import { SignInCodeService } from './sign-in-code.service';

const SERVICES = [SignInCodeService, OrgIdentityProviderService, OidcSignInService];

/** Signing people in: through their organisation's identity provider (OIDC), or with a local sign-in code. */
@Module({ imports: [IdentityModule], providers: SERVICES, exports: SERVICES })
export class SingleSignOnModule {}
