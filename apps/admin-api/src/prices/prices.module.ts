import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { PricesController } from './prices.controller';
import { PriceHistoryController } from './price-history.controller';

/** Price rules and their history. */
@Module({
  imports: [DomainLibsModule],
  controllers: [PricesController, PriceHistoryController],
})
export class PricesModule {}
