import { Global, Module } from '@nestjs/common';
import { UPSTREAM_SYNC_AUTH } from '@tollgate/upstream-registry';
import { ConnectionsModule, UserConnectionService } from '@tollgate/connections';

/**
 * Lets the catalog sync list per-user OAuth upstreams with a connected user's token. Global, so
 * the catalog's optional `UPSTREAM_SYNC_AUTH` finds it without the catalog knowing connections.
 */
@Global()
@Module({
  imports: [ConnectionsModule],
  providers: [{ provide: UPSTREAM_SYNC_AUTH, useExisting: UserConnectionService }],
  exports: [UPSTREAM_SYNC_AUTH, ConnectionsModule],
})
export class UpstreamSyncAuthModule {}
