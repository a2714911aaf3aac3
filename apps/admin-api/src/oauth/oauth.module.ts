import { Module } from '@nestjs/common';
import { DbModule } from '@tollgate/db';
import { IdentityModule } from '@tollgate/identity';
import { OAuthServerModule } from '@tollgate/oauth-server';
import { AuditService } from '../audit/audit.service';
import { OAuthInteractionHandler } from './oauth-interaction.handler';
import { OAuthServerService } from './oauth-server.service';
import { IdentityProviderController } from './identity-provider.controller';
import { SignInCodesController } from './sign-in-codes.controller';

/** The OAuth authorization server for MCP clients, and local sign-in codes. */
@Module({
  imports: [DbModule, IdentityModule, OAuthServerModule],
  controllers: [SignInCodesController, IdentityProviderController],
  providers: [OAuthServerService, OAuthInteractionHandler, AuditService],
})
export class OAuthModule {}
