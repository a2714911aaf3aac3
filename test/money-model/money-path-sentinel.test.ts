import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMoneyModel, SUITE_MONEY_MODEL_SEED } from '../../tools/money-model/money-commands';
import { aofRestarts, MoneySystem } from '../../tools/money-model/money-system';
import { freePort } from '../../tools/ports/free-port';
import { OwnRedis, startOwnRedis } from '../support/outages';

const MASTER = 'tgmaster';

/** A Sentinel (redis-server --sentinel) of the test's own, watching `masterPort` as MASTER. */
async function startSentinel(masterPort: number): Promise<{ seeds: string; stop(): Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'tg-sentinel-'));
  const conf = path.join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${MASTER} 127.0.0.1 ${masterPort} 1`,
      `sentinel down-after-milliseconds ${MASTER} 5000`,
    ].join('\n'),
  );
  const child = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 50 });
  probe.on('error', () => undefined);
  await probe.connect().catch(() => undefined);
  // Answers once it listens and knows the master.
  while (!(await probe.call('SENTINEL', 'get-master-addr-by-name', MASTER).catch(() => null)))
    await new Promise((r) => setTimeout(r, 50));
  probe.disconnect();
  return {
    seeds: `127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The money path through Redis Sentinel (REDIS_SENTINELS, REDIS_SENTINEL_MASTER): the same
 * model-based run as money-path-model.test.ts, bounded, with the master killed and restarted
 * from its append-only file mid-sequence (the clients find it again through the Sentinel).
 */
describe('the money path against its reference model through Redis Sentinel', () => {
  let env: TestEnv;
  let own: OwnRedis;
  let sentinel: { seeds: string; stop(): Promise<void> };

  beforeAll(async () => {
    env = await createTestEnv({});
    own = await startOwnRedis({ persist: true });
    sentinel = await startSentinel(Number(new URL(own.url).port));
  });

  afterAll(async () => {
    await sentinel?.stop();
    await own?.stop();
    await env?.cleanup();
  });

  it('should answer, count and meter every step as the model does', async () => {
    const { REDIS_URL: _standalone, ...vars } = env.vars;
    const sys = await MoneySystem.start(
      { ...vars, REDIS_SENTINELS: sentinel.seeds, REDIS_SENTINEL_MASTER: MASTER },
      { leases: false, restartRedis: aofRestarts(own) },
    );
    try {
      // The client asks the Sentinel for the master, not a URL.
      expect((sys.redis.client as Redis).options.sentinels).toEqual([{ host: '127.0.0.1', port: expect.any(Number) }]);
      const ran = await runMoneyModel({
        sys,
        numRuns: 8,
        maxCommands: 40,
        seed: SUITE_MONEY_MODEL_SEED,
        timeLimitMs: 60_000,
      }).catch((err: Error) => {
        console.error(err.message);
        throw err;
      });
      console.log(`sentinel: ${JSON.stringify(ran)}`);
      expect(ran.byCommand['admit:admitted']).toBeGreaterThan(0);
    } finally {
      await sys.close();
    }
  }, 180_000);
});
