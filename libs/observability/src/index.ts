export * from './metrics-token.guard';
