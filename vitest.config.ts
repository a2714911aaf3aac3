import { availableParallelism } from 'node:os';
import path from 'node:path';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';
import tsconfig from './tsconfig.base.json';

// `@tollgate/*` path aliases from tsconfig, so tests import libs exactly as the apps do.
const alias = Object.fromEntries(
  Object.entries(tsconfig.compilerOptions.paths).map(([name, [target]]) => [name, path.resolve(__dirname, target)]),
);

export default defineConfig({
  // SWC, not esbuild: NestJS dependency injection needs emitted decorator metadata.
  plugins: [
    swc.vite({
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true },
        target: 'es2022',
        keepClassNames: true,
      },
    }),
  ],
  resolve: { alias },
  test: {
    include: ['libs/**/*.spec.ts', 'apps/**/*.spec.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/outbound-setup.ts'],
    pool: 'forks',
    // The apps run inside each file's process, and most of a file's time is waiting on Postgres,
    // Redis, upstream processes or Chromium: two files at a time even on 2 cores (Vitest's default
    // is one fewer than the cores). TEST_MAX_WORKERS overrides.
    maxWorkers: Number(process.env.TEST_MAX_WORKERS) || Math.max(2, availableParallelism() - 1),
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
