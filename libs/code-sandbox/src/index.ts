export * from './sandbox-limits';
export * from './sandbox-prelude';
export * from './code-sandbox';
