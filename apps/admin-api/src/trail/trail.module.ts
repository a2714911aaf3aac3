import { Module } from '@nestjs/common';
import { ReportingLib } from '../reports/reporting-lib';
import { TrailController } from './trail.controller';

/** Agents' trails: what each session read and did. */
@Module({
  imports: [ReportingLib],
  controllers: [TrailController],
})
export class TrailModule {}
