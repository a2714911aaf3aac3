import { Module } from '@nestjs/common';
import { BudgetAdminService } from './budget-admin.service';
import { BudgetService } from './budget.service';

@Module({ providers: [BudgetService, BudgetAdminService], exports: [BudgetService, BudgetAdminService] })
export class BudgetModule {}
