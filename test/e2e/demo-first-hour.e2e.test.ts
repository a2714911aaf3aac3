import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlatformNotRunningError, runDemoAgent } from '../../tools/demo/demo-agent-run';
import { DEMO_FREE_TOOL, seedDemo } from '../../tools/start/demo-seed';
import { RunningPlatform, startPlatform } from '../support/platform';

/**
 * A new user's first hour: `npm start`'s demo data (seeded through the admin API, the real
 * reference servers over stdio) and `npm run demo:agent` against the real edge. The demo key has
 * its own budget; the agent calls the free tool, which answers like any other, then a priced tool
 * until the budget stops it.
 */
describe('the demo a new user runs first', () => {
  let p: RunningPlatform;
  let dataDir: string;
  let demoKey: string;

  beforeAll(async () => {
    p = await startPlatform();
    dataDir = await mkdtemp(path.join(tmpdir(), 'tollgate-demo-'));
    ({ demoKey } = await seedDemo({
      adminUrl: p.adminUrl,
      edgeUrl: p.edgeUrl,
      adminToken: p.adminToken,
      dataDir,
      log: () => undefined,
    }));
  });

  afterAll(async () => {
    await p?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('should answer the free tool for a key with its own budget, then stop the priced calls at the budget', async () => {
    const lines: string[] = [];
    await runDemoAgent({ edgeUrl: p.edgeUrl, demoKey, print: (l) => lines.push(l) });
    const out = lines.join('\n');
    expect(out).toMatch(new RegExp(`${DEMO_FREE_TOOL}\\s+free$`, 'm'));
    expect(out).toMatch(new RegExp(`calling the free tool ${DEMO_FREE_TOOL}: answered .* cost 0\\.000000 `));
    expect(out).not.toMatch(/USAGE_NOT_RECORDED/);
    // 0.10 a month at 0.01 per echo, after a resource read: about ten calls, then the budget refuses.
    const refused = /#(\d+) refused: BUDGET_EXCEEDED/.exec(out);
    expect(Number(refused?.[1])).toBeGreaterThanOrEqual(9);
  });

  it('should tell the user to run npm start when the platform is not running', async () => {
    const stopped = 'http://127.0.0.1:9';
    const run = runDemoAgent({ edgeUrl: stopped, demoKey, print: () => undefined });
    await expect(run).rejects.toBeInstanceOf(PlatformNotRunningError);
    await expect(run).rejects.toThrow(/does not answer .*Start the platform with `npm start`/);
  });
});
