/**
 * `npm run demo:agent`: runs the demo agent (demo-agent-run.ts) against the platform `npm start`
 * runs, with the edge URL and demo key it saved in .tollgate/demo.json.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { runDemoAgent } from './demo-agent-run';

const ROOT = path.resolve(__dirname, '../../..');

async function main(): Promise<void> {
  const demo = JSON.parse(
    await readFile(path.join(ROOT, '.tollgate/demo.json'), 'utf8').catch(() => {
      throw new Error('No .tollgate/demo.json: start the platform first with `npm start`.');
    }),
  ) as { edgeUrl: string; demoKey: string };
  await runDemoAgent({ ...demo, print: (line) => console.log(line) });
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
