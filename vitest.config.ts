import { availableParallelism } from 'node:os';
import path from 'node:path';
import swc from 'unplugin-swc';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { FileDurationSequencer } from './test/support/file-duration-sequencer';
import tsconfig from './tsconfig.base.json';

// `@tollgate/*` path aliases from tsconfig, so tests import libs exactly as the apps do.
const alias = Object.fromEntries(
  Object.entries(tsconfig.compilerOptions.paths).map(([name, [target]]) => [name, path.resolve(__dirname, target)]),
);

// What every project needs: SWC, not esbuild (NestJS dependency injection needs emitted decorator
// metadata), the aliases, the per-file setup and the timeouts.
const shared = {
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
} satisfies Omit<TestProjectInlineConfiguration, 'test'>;

const sharedTest = {
  setupFiles: ['test/outbound-setup.ts'],
  pool: 'forks',
  testTimeout: 60_000,
  hookTimeout: 120_000,
  // expect.poll waits for something another part does in its own time (an invalidation over
  // pub/sub, a call reaching an upstream fixture): Vitest's default bound of 1 s is a wall-clock
  // margin a loaded 2-core machine breaks. The bound only limits waiting; a poll returns as soon as
  // the condition holds, and the test's own timeout still ends one that never does.
  expect: { poll: { timeout: 30_000 } },
} satisfies TestProjectInlineConfiguration['test'];

export default defineConfig({
  ...shared,
  test: {
    // Run once for the whole run by the root project; both projects read what it provides.
    globalSetup: ['test/global-setup.ts'],
    // The apps run inside each file's process, and much of a file's time is waiting on Postgres,
    // Redis, upstream processes or Chromium: three files at a time even on 2 cores (Vitest's default
    // is one fewer than the cores): two workers left a 2-core machine a quarter idle, three keep it
    // ~88 % busy (docs/architecture.md, "The test suite's time"). TEST_MAX_WORKERS overrides.
    maxWorkers: Number(process.env.TEST_MAX_WORKERS) || Math.max(3, availableParallelism() - 1),
    reporters: ['default'],
    // Longest files first on a fresh clone too (test/file-durations.json), not only once Vitest has
    // timed them: a long file started last kept the other workers idle at the end of a run.
    sequence: { sequencer: FileDurationSequencer },
    projects: [
      {
        ...shared,
        test: {
          ...sharedTest,
          name: 'unit',
          include: ['libs/**/*.spec.ts', 'apps/**/*.spec.ts'],
          // The specs keep no state in modules between files: a worker runs file after file on one
          // module graph instead of importing Nest, Prisma and the libs again for each.
          isolate: false,
        },
      },
      {
        ...shared,
        test: {
          ...sharedTest,
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          // The same for the e2e files: each boots its own apps on its own database, Redis prefix and
          // ports, and what a module keeps is per app or keyed by what it names (a pattern, a URL
          // with its port), so a worker need not import Nest, Prisma, the SDK and OpenTelemetry
          // again for every file (that was ~1.5 s of each file's time).
          isolate: false,
        },
      },
    ],
  },
});
