import { Module } from '@nestjs/common';
import { DbModule } from '@tollgate/db';
import { DomainLibsModule } from '../domain-libs.module';
import { OAuthInteractionHandler } from './oauth-interaction.handler';
import { OAuthServerService } from './oauth-server.service';
import { IdentityProviderController } from './identity-provider.controller';
import { SignInCodesController } from './sign-in-codes.controller';

/** The OAuth authorization server for MCP clients, and local sign-in codes. */
@Module({
  imports: [DbModule, DomainLibsModule],
  controllers: [SignInCodesController, IdentityProviderController],
  providers: [OAuthServerService, OAuthInteractionHandler],
})
export class OAuthModule {}
