// `node tools/check/run-all.mjs typecheck lint test:vitest`: runs those npm scripts at once and fails
// if any fails. The last one's output streams as it comes (the test run's progress); the others'
// is printed whole when each ends, so lines never interleave. At once, not one after the other:
// typecheck and lint are mostly single-threaded and the test run leaves a core idle part of the
// time, so together they end sooner on a two-core machine than in a row.
import { spawn } from 'node:child_process';

const scripts = process.argv.slice(2);
const results = await Promise.all(
  scripts.map(
    (script, i) =>
      new Promise((resolve) => {
        const streamed = i === scripts.length - 1;
        const child = spawn('npm', ['run', '--silent', script], {
          stdio: ['ignore', streamed ? 'inherit' : 'pipe', streamed ? 'inherit' : 'pipe'],
        });
        const output = [];
        child.stdout?.on('data', (chunk) => output.push(chunk));
        child.stderr?.on('data', (chunk) => output.push(chunk));
        child.on('close', (code, signal) => {
          process.stdout.write(Buffer.concat(output));
          const ok = code === 0;
          console.log(`${script}: ${ok ? 'passed' : `failed (${signal ?? `exit ${code}`})`}`);
          resolve(ok);
        });
      }),
  ),
);
process.exit(results.every(Boolean) ? 0 : 1);
