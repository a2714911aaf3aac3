import { Module } from '@nestjs/common';
import { RateLimitAdminService } from './rate-limit-admin.service';
import { RateLimitService } from './rate-limit.service';

@Module({ providers: [RateLimitService, RateLimitAdminService], exports: [RateLimitService, RateLimitAdminService] })
export class RateLimitModule {}
