import { Module } from '@nestjs/common';
import { SingleSignOnModule } from '@tollgate/sso';
import { IdentityModule } from '@tollgate/identity';
import { AuditFeatureModule } from '../audit/audit.module';
import { AdminSessionService } from '../auth/admin-session.service';
import { SessionController } from './session.controller';
import { SsoController } from './sso.controller';
import { IdentityProviderController } from './identity-provider.controller';
import { SignInCodesController } from './sign-in-codes.controller';

/**
 * Signing people in: single sign-on into the admin API with cookie sessions (the auth guard
 * resolves them), an organisation's identity provider, and local sign-in codes.
 */
@Module({
  imports: [SingleSignOnModule, IdentityModule, AuditFeatureModule],
  // First: the OpenAPI document lists them where the OAuth module used to register them.
  controllers: [SignInCodesController, IdentityProviderController, SsoController, SessionController],
  providers: [AdminSessionService],
  exports: [AdminSessionService],
})
export class SsoModule {}
