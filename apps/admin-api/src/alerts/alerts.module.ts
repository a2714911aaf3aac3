import { Module } from '@nestjs/common';
import { ReportingLib } from '../reports/reporting-lib';
import { AlertsController } from './alerts.controller';

/** Budget alerts and their webhooks. */
@Module({
  imports: [ReportingLib],
  controllers: [AlertsController],
})
export class AlertsModule {}
