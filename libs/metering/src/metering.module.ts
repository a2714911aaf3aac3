import { Module } from '@nestjs/common';
import { LedgerService } from './ledger.service';
import { MeteringService } from './metering.service';

@Module({ providers: [MeteringService, LedgerService], exports: [MeteringService, LedgerService] })
export class MeteringModule {}
