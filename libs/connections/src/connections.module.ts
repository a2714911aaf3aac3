import { Module } from '@nestjs/common';
import { ConnectFlowService } from './connect-flow.service';
import { UpstreamOAuthService } from './upstream-oauth.service';
import { UserConnectionService } from './user-connection.service';

/** Per-user OAuth connections to upstreams: discovery, the connect flow, sealed tokens, refresh. */
@Module({
  providers: [UpstreamOAuthService, UserConnectionService, ConnectFlowService],
  exports: [UpstreamOAuthService, UserConnectionService, ConnectFlowService],
})
export class ConnectionsModule {}
