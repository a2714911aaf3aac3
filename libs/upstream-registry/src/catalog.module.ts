import { Module } from '@nestjs/common';
import { CatalogEntryReviewService } from './catalog-entry-review.service';
import { CatalogScheduleService } from './catalog-schedule.service';
import { CatalogSyncService } from './catalog-sync.service';
import { TierScoreJobs } from './tier-score-jobs.service';
import { TierScoreService } from './tier-score.service';
import { ToolCatalogService } from './tool-catalog.service';
import { ToolReviewService } from './tool-review.service';
import { UpstreamLifecycleService } from './upstream-lifecycle.service';
import { UpstreamRegistry } from './upstream-registry.service';

/** Every catalog service is also what the module exports. */
const CATALOG_SERVICES = [
  UpstreamRegistry,
  CatalogSyncService,
  ToolCatalogService,
  CatalogScheduleService,
  ToolReviewService,
  TierScoreService,
  TierScoreJobs,
  UpstreamLifecycleService,
  CatalogEntryReviewService,
];

@Module({ providers: CATALOG_SERVICES, exports: CATALOG_SERVICES })
export class CatalogModule {}
