export * from './queue-names';
export * from './usage-outbox';
export * from './queue.module';
export * from './job-producer.service';
export * from './queue-error-log';
