import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { FINANCE_SCHEDULES, FinanceJobs } from '@tollgate/reporting';

/** At boot, makes sure the rollup, budget-alert and reconcile schedules exist (idempotent upserts). */
@Injectable()
export class FinanceScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(FinanceScheduler.name);

  constructor(private readonly jobs: FinanceJobs) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.jobs.scheduleRecurring();
    this.logger.log(
      `finance schedules in place: rollups every ${FINANCE_SCHEDULES.rollupEveryMs / 1000} s, alerts every ${FINANCE_SCHEDULES.alertsEveryMs / 1000} s, reconcile every ${FINANCE_SCHEDULES.reconcileEveryMs / 1000} s`,
    );
  }
}
