import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(__dirname, '../..');

/**
 * The console as `npm run build` makes it, into a new directory of this run (a parallel build may
 * replace dist/), for ADMIN_CONSOLE_DIR. The test run's global setup builds it once; the browser
 * tests' admin APIs serve it and nothing writes to it. Built in a process of its own with
 * NODE_ENV=production: Vitest's NODE_ENV=test would make it React's development build, whose
 * StrictMode runs every effect twice (each page would ask the API for everything twice). The tests
 * drive the production build that ships.
 */
export async function buildConsole(): Promise<string> {
  const outDir = await mkdtemp(path.join(tmpdir(), 'tollgate-console-'));
  await promisify(execFile)(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/vite/bin/vite.js'),
      'build',
      '--config',
      path.join(ROOT, 'apps/console/vite.config.mts'),
      '--outDir',
      outDir,
      '--emptyOutDir',
      '--logLevel',
      'error',
    ],
    { cwd: ROOT, env: { ...process.env, NODE_ENV: 'production' } },
  );
  return outDir;
}
