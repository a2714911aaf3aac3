// `node tools/check/run-all.mjs typecheck lint`: runs those npm scripts at once (each is mostly one
// single-threaded process, so two of them use two cores) and fails if any fails. Each script's
// output is printed whole when it ends, so the two never interleave.
import { spawn } from 'node:child_process';

const scripts = process.argv.slice(2);
const results = await Promise.all(
  scripts.map(
    (script) =>
      new Promise((resolve) => {
        const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
        const output = [];
        child.stdout.on('data', (chunk) => output.push(chunk));
        child.stderr.on('data', (chunk) => output.push(chunk));
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
