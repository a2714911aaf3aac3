import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { BudgetsController } from './budgets.controller';

/** Budgets at every level. */
@Module({
  imports: [DomainLibsModule],
  controllers: [BudgetsController],
})
export class BudgetsModule {}
