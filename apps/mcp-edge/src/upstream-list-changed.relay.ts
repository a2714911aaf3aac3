import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { CatalogScheduleService } from '@tollgate/upstream-registry';
import { UpstreamClientPool } from '@tollgate/mcp-client';

/** When an upstream announces `tools/list_changed` on a pooled connection, queue a catalog sync. */
@Injectable()
export class UpstreamListChangedRelay implements OnModuleInit {
  private readonly logger = new Logger(UpstreamListChangedRelay.name);

  constructor(
    private readonly pool: UpstreamClientPool,
    private readonly schedule: CatalogScheduleService,
  ) {}

  onModuleInit(): void {
    this.pool.onToolListChanged((spec) => {
      this.schedule
        .requestSync(spec.orgId, spec.id, 'list-changed')
        .catch((err: Error) => this.logger.warn(`could not queue sync of ${spec.namespace}: ${err.message}`));
    });
  }
}
