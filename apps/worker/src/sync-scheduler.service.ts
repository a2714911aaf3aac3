import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { CatalogScheduleService, UpstreamRegistry } from '@tollgate/catalog';

/** At boot, makes sure every enabled upstream has its repeating sync (idempotent upserts). */
@Injectable()
export class SyncScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(SyncScheduler.name);

  constructor(
    private readonly registry: UpstreamRegistry,
    private readonly schedule: CatalogScheduleService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const upstreams = await this.registry.listAllEnabled();
    for (const u of upstreams) await this.schedule.scheduleUpstreamSync(u);
    this.logger.log(`sync schedules in place for ${upstreams.length} upstream(s)`);
  }
}
