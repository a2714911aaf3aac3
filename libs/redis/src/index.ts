export * from './redis.service';
export * from './redis.module';
export * from './org-config-cache';
export * from './redis-epoch';
