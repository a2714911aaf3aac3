import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { CallsController } from './calls.controller';

/** The per-call log. */
@Module({
  imports: [DomainLibsModule],
  controllers: [CallsController],
})
export class CallsModule {}
