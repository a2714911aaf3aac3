export * from './price-rule';
export * from './pricing.service';
export * from './pricing.module';
