export * from './token-counter';
export * from './text-pages';
