export * from './catalog.exception';
export * from './tool-definition';
export * from './upstream-registry.service';
export * from './upstream-sync-auth';
export * from './catalog-sync.service';
export * from './tool-catalog.service';
export * from './catalog.module';
export * from './catalog-schedule.service';
