import { Module } from '@nestjs/common';
import { PricingModule } from '@tollgate/pricing';
import { PricesController } from './prices.controller';
import { PriceHistoryController } from './price-history.controller';

/** Price rules and their history. */
@Module({
  imports: [PricingModule],
  controllers: [PricesController, PriceHistoryController],
})
export class PricesModule {}
