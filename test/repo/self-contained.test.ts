import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');
const SCANNED = ['apps', 'libs', 'test', 'bench', 'tools'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.vite']);
// Spelled in two parts so this file does not match itself.
const OUTSIDE = ['..', 'shared'].join('/');

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) yield* files(path.join(dir, entry.name));
    } else if (entry.isFile()) yield path.join(dir, entry.name);
  }
}

/**
 * A fresh clone with nothing beside it must pass its tests and run its benches: no code, test,
 * bench, tool or fixture may reach the project's shared folder outside the repository (CI has
 * one, a new user does not). Fixtures are copied into test/fixtures with their licences.
 */
describe('the repository stands alone', () => {
  it(`should have no file under ${SCANNED.join(', ')} that refers to ${OUTSIDE}`, () => {
    const offenders: string[] = [];
    let scanned = 0;
    for (const top of SCANNED)
      for (const file of files(path.join(ROOT, top))) {
        if (statSync(file).size > 20_000_000) continue;
        scanned++;
        if (readFileSync(file, 'latin1').includes(OUTSIDE)) offenders.push(path.relative(ROOT, file));
      }
    expect(scanned).toBeGreaterThan(500);
    expect(offenders).toEqual([]);
  });
});
