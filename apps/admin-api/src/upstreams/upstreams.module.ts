import { Module } from '@nestjs/common';
import { CatalogModule } from '@tollgate/upstream-registry';
import { AuditFeatureModule } from '../audit/audit.module';
import { UpstreamsController } from './upstreams.controller';
import { UpstreamLifecycleController } from './upstream-lifecycle.controller';
import { UpstreamAdminService } from './upstream-admin.service';

/** Upstream MCP servers: registration, sync, exposure and lifecycle. */
@Module({
  imports: [CatalogModule, AuditFeatureModule],
  controllers: [UpstreamsController, UpstreamLifecycleController],
  providers: [UpstreamAdminService],
})
export class UpstreamsModule {}
