export * from './usage-event';
export * from './outbox-entry';
export * from './outbox-streams';
export * from './metering.service';
export * from './ledger.service';
export * from './metering.module';
export * from './ledger-partitions.service';
export * from './refused-call';
export * from './refusal-recorder.service';
export * from './trail-event';
export * from './trail-recorder.service';
export * from './trail-retention.service';
export * from './ledger-writer.service';
export * from './usage-ledger.consumer';
// A complete event for specs (here and in the worker's), not used by the apps.
export { sampleUsageEvent } from './sample-usage-event';
