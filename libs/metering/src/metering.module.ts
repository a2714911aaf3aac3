import { Module } from '@nestjs/common';
import { LedgerService } from './ledger.service';
import { LedgerPartitionsService } from './ledger-partitions.service';
import { MeteringService } from './metering.service';
import { RefusalRecorder } from './refusal-recorder.service';

@Module({
  providers: [MeteringService, LedgerService, LedgerPartitionsService, RefusalRecorder],
  exports: [MeteringService, LedgerService, LedgerPartitionsService, RefusalRecorder],
})
export class MeteringModule {}
