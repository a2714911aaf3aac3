import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { AlertsController } from './alerts.controller';

/** Budget alerts and their webhooks. */
@Module({
  imports: [DomainLibsModule],
  controllers: [AlertsController],
})
export class AlertsModule {}
