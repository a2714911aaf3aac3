import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { RateLimitsController } from './rate-limits.controller';

/** Rate and concurrency limits. */
@Module({
  imports: [DomainLibsModule],
  controllers: [RateLimitsController],
})
export class RateLimitsModule {}
