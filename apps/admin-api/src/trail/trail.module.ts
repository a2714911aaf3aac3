import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { TrailController } from './trail.controller';

/** Agents' trails: what each session read and did. */
@Module({
  imports: [DomainLibsModule],
  controllers: [TrailController],
})
export class TrailModule {}
