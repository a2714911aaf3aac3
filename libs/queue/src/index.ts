export * from './queue-names';
export * from './queue.module';
export * from './job-producer.service';
export * from './queue-error-log';
