import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { ReportsController } from './reports.controller';
import { RefusalsController } from './refusals.controller';
import { PlatformReportsController } from './platform-reports.controller';
import { BudgetReconcileController } from './budget-reconcile.controller';

/** Spend reports, refusals, platform reports and budget reconciles. */
@Module({
  imports: [DomainLibsModule],
  controllers: [ReportsController, RefusalsController, PlatformReportsController, BudgetReconcileController],
})
export class ReportsModule {}
