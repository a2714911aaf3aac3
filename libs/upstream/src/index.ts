export * from './upstream.exception';
export * from './upstream-spec';
export * from './upstream-secrets';
export * from './upstream-connector';
export * from './upstream-client-capabilities';
export * from './circuit-breaker';
export * from './upstream-client-pool.service';
export * from './upstream.module';
