import { Module } from '@nestjs/common';
import { ReportingLib } from '../reports/reporting-lib';
import { CallsController } from './calls.controller';

/** The per-call log. */
@Module({
  imports: [ReportingLib],
  controllers: [CallsController],
})
export class CallsModule {}
