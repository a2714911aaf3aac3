import { Module } from '@nestjs/common';
import { UpstreamClientPool } from './upstream-client-pool.service';

@Module({ providers: [UpstreamClientPool], exports: [UpstreamClientPool] })
export class UpstreamModule {}
