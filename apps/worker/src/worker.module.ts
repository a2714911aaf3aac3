import { queueTelemetry, ShutdownDrain } from '@tollgate/observability';
import { DynamicModule, Module } from '@nestjs/common';
import { BudgetModule } from '@tollgate/budget';
import { CatalogModule } from '@tollgate/upstream-registry';
import { ConfigModule, WorkerConfig } from '@tollgate/config';
import { DbModule } from '@tollgate/db';
import { QueueModule } from '@tollgate/queue';
import { RedisModule } from '@tollgate/redis';
import { FinanceJobs, ReportingModule } from '@tollgate/reporting';
import {
  LedgerWriter,
  MeteringModule,
  USAGE_WRITTEN_LISTENER,
  UsageLedgerConsumer,
  UsageWrittenListener,
} from '@tollgate/usage';
import { BUDGET_COUNTERS_PROVIDER } from './budget-counters.provider';
import { HealthController } from './health/health.controller';
import { CatalogSyncProcessor } from './processors/catalog-sync.processor';
import { AlertDeliveryProcessor } from './processors/alert-delivery.processor';
import { BudgetAlertsProcessor } from './processors/budget-alerts.processor';
import { BudgetReconcileProcessor } from './processors/budget-reconcile.processor';
import { UsageRollupProcessor } from './processors/usage-rollup.processor';
import { OAuthRefreshProcessor } from './processors/oauth-refresh.processor';
import { UpstreamSyncAuthModule } from './upstream-sync-auth.module';
import { ToolProfilerModule } from '@tollgate/disclosure';
import { TierScoresProcessor } from './processors/tier-scores.processor';
import { JobSchedules } from './job-schedules.service';
import { RedisStateWatch } from './redis-state-watch.service';
import { CorruptCounterWatch } from './corrupt-counter-watch.service';

@Module({})
export class WorkerModule {
  static forRoot(config: WorkerConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forRoot(config),
        DbModule,
        RedisModule,
        QueueModule.forRoot({ telemetry: queueTelemetry() }),
        UpstreamSyncAuthModule,
        ToolProfilerModule,
        CatalogModule,
        MeteringModule,
        BudgetModule,
        ReportingModule.register({ imports: [BudgetModule], budgetCounters: BUDGET_COUNTERS_PROVIDER }),
      ],
      controllers: [HealthController],
      providers: [
        CatalogSyncProcessor,
        LedgerWriter,
        UsageLedgerConsumer,
        {
          // New spend may have crossed a budget threshold: its organisations' alert checks are asked for at once.
          provide: USAGE_WRITTEN_LISTENER,
          inject: [FinanceJobs],
          useFactory: (jobs: FinanceJobs): UsageWrittenListener => ({
            usageWritten: (orgId) => jobs.requestAlertCheck(orgId),
          }),
        },
        UsageRollupProcessor,
        BudgetAlertsProcessor,
        AlertDeliveryProcessor,
        BudgetReconcileProcessor,
        OAuthRefreshProcessor,
        TierScoresProcessor,
        JobSchedules,
        RedisStateWatch,
        CorruptCounterWatch,
        ShutdownDrain,
      ],
    };
  }
}
