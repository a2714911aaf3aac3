export * from './audit-actor';
export * from './audit-details';
export * from './audit-vocabulary';
export * from './audit-writer';
