import { DynamicModule, Module } from '@nestjs/common';
import { CatalogModule } from '@tollgate/catalog';
import { ConfigModule, WorkerConfig } from '@tollgate/config';
import { DbModule } from '@tollgate/db';
import { MeteringModule } from '@tollgate/metering';
import { QueueModule } from '@tollgate/queue';
import { RedisModule } from '@tollgate/redis';
import { HealthController } from './health/health.controller';
import { CatalogSyncProcessor } from './processors/catalog-sync.processor';
import { UsageLedgerProcessor } from './processors/usage-ledger.processor';
import { SyncScheduler } from './sync-scheduler.service';

@Module({})
export class WorkerModule {
  static forRoot(config: WorkerConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [ConfigModule.forRoot(config), DbModule, RedisModule, QueueModule.forRoot(), CatalogModule, MeteringModule],
      controllers: [HealthController],
      providers: [CatalogSyncProcessor, UsageLedgerProcessor, SyncScheduler],
    };
  }
}
