export * from './config.schema';
export * from './tollgate-config';
export * from './config.module';
export * from './redis-settings';
