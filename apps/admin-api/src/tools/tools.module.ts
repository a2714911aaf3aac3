import { Module } from '@nestjs/common';
import { CatalogEntryReviewService } from '@tollgate/catalog';
import { DomainLibsModule } from '../domain-libs.module';
import { ToolBulkReviewController } from './tool-bulk-review.controller';
import { ToolsController } from './tools.controller';
import { CatalogEntriesController } from './catalog-entries.controller';

/** The catalog as admins review it: tools, prompts and resources, one by one or in bulk. */
@Module({
  imports: [DomainLibsModule],
  controllers: [ToolBulkReviewController, ToolsController, CatalogEntriesController],
  providers: [CatalogEntryReviewService],
})
export class ToolsModule {}
