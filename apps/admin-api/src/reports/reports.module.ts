import { Module } from '@nestjs/common';
import { ReportingLib } from './reporting-lib';
import { IdentityModule } from '@tollgate/identity';
import { AuditFeatureModule } from '../audit/audit.module';
import { ReportsController } from './reports.controller';
import { RefusalsController } from './refusals.controller';
import { PlatformReportsController } from './platform-reports.controller';
import { BudgetReconcileController } from './budget-reconcile.controller';

/** Spend reports, refusals, platform reports and budget reconciles. */
@Module({
  imports: [ReportingLib, IdentityModule, AuditFeatureModule],
  controllers: [ReportsController, RefusalsController, PlatformReportsController, BudgetReconcileController],
})
export class ReportsModule {}
