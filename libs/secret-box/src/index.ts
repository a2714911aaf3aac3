export * from './secret-box.exception';
export * from './secret-box';
