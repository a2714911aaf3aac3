import { Module } from '@nestjs/common';
import { BudgetModule } from '@tollgate/budget';
import { ReportingLib } from '../reports/reporting-lib';
import { BudgetsController } from './budgets.controller';

/** Budgets at every level. */
@Module({
  imports: [BudgetModule, ReportingLib],
  controllers: [BudgetsController],
})
export class BudgetsModule {}
