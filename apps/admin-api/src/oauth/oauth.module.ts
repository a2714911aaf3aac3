import { Module } from '@nestjs/common';
import { OAuthServerModule } from '@tollgate/oauth-server';
import { SingleSignOnModule } from '@tollgate/sso';
import { AuditFeatureModule } from '../audit/audit.module';
import { OAuthInteractionHandler } from './oauth-interaction.handler';
import { OAuthServerService } from './oauth-server.service';

/** The OAuth authorization server for MCP clients. */
@Module({
  imports: [OAuthServerModule, SingleSignOnModule, AuditFeatureModule],
  providers: [OAuthServerService, OAuthInteractionHandler],
})
export class OAuthModule {}
