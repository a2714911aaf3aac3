export * from './task-wire';
export * from './task-store.service';
