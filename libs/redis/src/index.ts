export * from './redis.service';
export * from './redis.module';
export * from './org-config-cache';
export * from './redis-epoch';
export * from './redis-client.factory';
export * from './replica-wait';
export * from './redis-shards';
export * from './lua-script';
