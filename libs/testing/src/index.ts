export * from './test-database';
export * from './test-env';
export * from './agent-client';
export * from './queue-helpers';
export * from './fixture-servers';
export * from './usage-outbox-helpers';
export * from './test-redis';
export * from './refusal-helpers';
