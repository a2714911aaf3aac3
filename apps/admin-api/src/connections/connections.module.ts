import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { ConnectionsController } from './connections.controller';
import { OAuthCallbackController } from './oauth-callback.controller';

/** Users' per-user OAuth connections to upstreams, and the OAuth redirect that completes them. */
@Module({
  imports: [DomainLibsModule],
  controllers: [ConnectionsController, OAuthCallbackController],
})
export class ConnectionsFeatureModule {}
