import { DynamicModule, Module, ModuleMetadata, Provider } from '@nestjs/common';
import { AlertDeliveryService } from './alert-delivery.service';
import { AlertWebhookService } from './alert-webhook.service';
import { BudgetAlertService } from './budget-alert.service';
import { BudgetReconcileService } from './budget-reconcile.service';
import { BudgetUtilisationService } from './budget-utilisation.service';
import { CallLogService } from './call-log.service';
import { TrailService } from './trail.service';
import { FinanceJobs } from './finance-jobs.service';
import { RefusalReportService } from './refusal-report.service';
import { PlatformSpendReportService, SpendReportService } from './spend-report.service';
import { UsageRollupService } from './usage-rollup.service';

const SERVICES = [
  SpendReportService,
  PlatformSpendReportService,
  UsageRollupService,
  BudgetUtilisationService,
  AlertWebhookService,
  BudgetAlertService,
  AlertDeliveryService,
  BudgetReconcileService,
  FinanceJobs,
  RefusalReportService,
  CallLogService,
  TrailService,
];

/**
 * Spend reports, rollups, budget alerts and reconciliation. The app supplies the budget counters
 * (`BUDGET_COUNTERS`, bound to the budget lib) and the module that provides them.
 */
@Module({})
export class ReportingModule {
  static register(opts: { imports: NonNullable<ModuleMetadata['imports']>; budgetCounters: Provider }): DynamicModule {
    return {
      module: ReportingModule,
      imports: opts.imports,
      providers: [...SERVICES, opts.budgetCounters],
      exports: SERVICES,
    };
  }
}
