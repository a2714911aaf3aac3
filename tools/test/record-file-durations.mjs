// Writes test/file-durations.json from the durations Vitest cached in its last run
// (node_modules/.vite/vitest/*/results.json): run `npm test` (or `npm run test:vitest`), then
// `node tools/test/record-file-durations.mjs`. test/support/file-duration-sequencer.ts starts the
// longest files first from it on a clone whose Vitest cache is empty (a fresh CI clone).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const cacheRoot = 'node_modules/.vite/vitest';
const durations = {};
for (const dir of readdirSync(cacheRoot)) {
  const { results } = JSON.parse(readFileSync(path.join(cacheRoot, dir, 'results.json'), 'utf8'));
  for (const [key, { duration }] of results) if (duration > 0) durations[key] = Math.round(duration);
}
const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync('test/file-durations.json', `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/file-durations.json: ${Object.keys(sorted).length} files`);
