import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { UpstreamsController } from './upstreams.controller';
import { UpstreamLifecycleController } from './upstream-lifecycle.controller';
import { UpstreamAdminService } from './upstream-admin.service';

/** Upstream MCP servers: registration, sync, exposure and lifecycle. */
@Module({
  imports: [DomainLibsModule],
  controllers: [UpstreamsController, UpstreamLifecycleController],
  providers: [UpstreamAdminService],
})
export class UpstreamsModule {}
