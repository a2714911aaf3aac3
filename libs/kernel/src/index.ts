export * from './money';
export * from './tool-ref';
export * from './tool-pattern';
export * from './budget-period';
export * from './stable-json';
export * from './tenant-level';
export * from './media-type';
export * from './dependency-outage';
