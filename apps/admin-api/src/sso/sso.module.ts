import { Module } from '@nestjs/common';
import { DbModule } from '@tollgate/db';
import { IdentityModule } from '@tollgate/identity';
import { OAuthServerModule } from '@tollgate/oauth-server';
import { AuditService } from '../audit/audit.service';
import { AdminSessionService } from '../auth/admin-session.service';
import { SessionController } from './session.controller';
import { SsoController } from './sso.controller';
import { UserOrgRoleController } from '../users/user-org-role.controller';

/** Single sign-on into the admin API: cookie sessions (the auth guard resolves them), org roles. */
@Module({
  imports: [DbModule, IdentityModule, OAuthServerModule],
  controllers: [SsoController, SessionController, UserOrgRoleController],
  providers: [AdminSessionService, AuditService],
  exports: [AdminSessionService],
})
export class SsoModule {}
