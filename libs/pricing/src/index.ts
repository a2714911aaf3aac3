export * from './price-rule';
export * from './pricing.service';
export * from './price-book.service';
export * from './pricing.module';
export * from './price-book.exception';
