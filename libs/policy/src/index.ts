export * from './access-decision';
export * from './policy.service';
export * from './policy-admin.service';
export * from './policy.module';
export * from './policy-admin.exception';
export * from './resource-pattern';
export * from './policy-change';
export * from './resource-uri';
