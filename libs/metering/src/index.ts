export * from './usage-event';
export * from './usage-outbox';
export * from './metering.service';
export * from './ledger.service';
export * from './metering.module';
