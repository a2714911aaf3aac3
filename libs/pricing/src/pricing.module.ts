import { Module } from '@nestjs/common';
import { PriceBookService } from './price-book.service';
import { PricingService } from './pricing.service';

@Module({ providers: [PricingService, PriceBookService], exports: [PricingService, PriceBookService] })
export class PricingModule {}
