import { Module } from '@nestjs/common';
import { LedgerService } from './ledger.service';
import { LedgerPartitionsService } from './ledger-partitions.service';
import { MeteringService } from './metering.service';
import { RefusalRecorder } from './refusal-recorder.service';
import { TrailRecorder } from './trail-recorder.service';
import { TrailRetentionService } from './trail-retention.service';

@Module({
  providers: [
    MeteringService,
    LedgerService,
    LedgerPartitionsService,
    RefusalRecorder,
    TrailRecorder,
    TrailRetentionService,
  ],
  exports: [
    MeteringService,
    LedgerService,
    LedgerPartitionsService,
    RefusalRecorder,
    TrailRecorder,
    TrailRetentionService,
  ],
})
export class MeteringModule {}
