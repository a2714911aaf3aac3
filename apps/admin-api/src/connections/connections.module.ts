import { Module } from '@nestjs/common';
import { ConnectionsModule } from '@tollgate/connections';
import { CatalogModule } from '@tollgate/upstream-registry';
import { AuditFeatureModule } from '../audit/audit.module';
import { ConnectionsController } from './connections.controller';
import { OAuthCallbackController } from './oauth-callback.controller';

/** Users' per-user OAuth connections to upstreams, and the OAuth redirect that completes them. */
@Module({
  imports: [ConnectionsModule, CatalogModule, AuditFeatureModule],
  controllers: [ConnectionsController, OAuthCallbackController],
})
export class ConnectionsFeatureModule {}
