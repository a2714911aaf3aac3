export * from './rate-limit-scripts';
export * from './rate-limit.service';
export * from './rate-limit-admin.service';
export * from './rate-limit.exception';
export * from './rate-limit.module';
