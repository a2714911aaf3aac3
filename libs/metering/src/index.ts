export * from './usage-event';
export * from './usage-outbox';
export * from './metering.service';
export * from './ledger.service';
export * from './metering.module';
export * from './ledger-partitions.service';
export * from './refused-call';
export * from './refusal-recorder.service';
