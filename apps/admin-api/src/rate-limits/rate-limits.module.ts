import { Module } from '@nestjs/common';
import { RateLimitModule } from '@tollgate/rate-limit';
import { RateLimitsController } from './rate-limits.controller';

/** Rate and concurrency limits. */
@Module({
  imports: [RateLimitModule],
  controllers: [RateLimitsController],
})
export class RateLimitsModule {}
