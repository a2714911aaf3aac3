import { Module } from '@nestjs/common';
import { CatalogModule } from '@tollgate/upstream-registry';
import { AuditFeatureModule } from '../audit/audit.module';
import { ToolBulkReviewController } from './tool-bulk-review.controller';
import { ToolsController } from './tools.controller';
import { CatalogEntriesController } from './catalog-entries.controller';

/** The catalog as admins review it: tools, prompts and resources, one by one or in bulk. */
@Module({
  imports: [CatalogModule, AuditFeatureModule],
  controllers: [ToolBulkReviewController, ToolsController, CatalogEntriesController],
})
export class ToolsModule {}
