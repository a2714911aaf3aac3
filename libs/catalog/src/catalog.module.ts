import { Module } from '@nestjs/common';
import { CatalogSyncService } from './catalog-sync.service';
import { ToolCatalogService } from './tool-catalog.service';
import { UpstreamRegistry } from './upstream-registry.service';

@Module({
  providers: [UpstreamRegistry, CatalogSyncService, ToolCatalogService],
  exports: [UpstreamRegistry, CatalogSyncService, ToolCatalogService],
})
export class CatalogModule {}
