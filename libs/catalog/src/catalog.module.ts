import { Module } from '@nestjs/common';
import { CatalogScheduleService } from './catalog-schedule.service';
import { CatalogSyncService } from './catalog-sync.service';
import { ToolCatalogService } from './tool-catalog.service';
import { UpstreamRegistry } from './upstream-registry.service';

@Module({
  providers: [UpstreamRegistry, CatalogSyncService, ToolCatalogService, CatalogScheduleService],
  exports: [UpstreamRegistry, CatalogSyncService, ToolCatalogService, CatalogScheduleService],
})
export class CatalogModule {}
