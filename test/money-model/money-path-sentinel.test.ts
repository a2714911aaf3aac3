import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { BASE_ENV_SCHEMA, redisConfigFrom } from '@tollgate/config';
import { createRedisClient } from '@tollgate/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMoneyModel, SUITE_MONEY_MODEL_SEED } from '../../tools/money-model/money-commands';
import { aofRestarts, MoneySystem } from '../../tools/money-model/money-system';
import { freePort } from '../../tools/ports/free-port';
import { OwnRedis, startOwnRedis } from '../support/outages';
import { startTlsRedis, startTlsSentinel, TlsRedis, TlsSentinel } from '../support/tls-redis';

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

/**
 * Sentinel shaped like a locked-down deployment: master and sentinel on TLS only, both requiring a
 * client certificate from the deployment's CA (`tls-auth-clients yes`), an ACL user with the
 * default user off, and a password on the sentinel itself. Configured only by a
 * `rediss+sentinel://user:password@host:port/<master>` REDIS_URL, REDIS_SENTINEL_PASSWORD and
 * REDIS_TLS_CA_FILE / REDIS_TLS_CERT_FILE / REDIS_TLS_KEY_FILE.
 */
describe('the money path through a TLS Sentinel with client certificates and an ACL user', () => {
  let env: TestEnv;
  let redis: TlsRedis;
  let sentinel: TlsSentinel;
  let vars: Record<string, string>;

  beforeAll(async () => {
    env = await createTestEnv({});
    redis = await startTlsRedis({ clientCertificates: true });
    sentinel = await startTlsSentinel(redis, true);
    const { REDIS_URL: _standalone, ...rest } = env.vars;
    vars = {
      ...rest,
      REDIS_URL: `rediss+sentinel://${redis.username}:${redis.password}@${sentinel.seeds}/${sentinel.masterName}`,
      REDIS_SENTINEL_PASSWORD: sentinel.password,
      REDIS_TLS_CA_FILE: redis.caFile,
      REDIS_TLS_CERT_FILE: redis.clientCertFile,
      REDIS_TLS_KEY_FILE: redis.clientKeyFile,
    };
  }, 120_000);

  afterAll(async () => {
    await sentinel?.stop();
    await redis?.stop();
    await env?.cleanup();
  });

  it('should answer, count and meter every step as the model does, every connection the ACL user over TLS', async () => {
    const sys = await MoneySystem.start(vars, { leases: false });
    try {
      const client = sys.redis.client as Redis;
      expect(client.options.sentinels).toEqual([{ host: '127.0.0.1', port: Number(sentinel.seeds.split(':')[1]) }]);
      expect(client.options.enableTLSForSentinelMode).toBe(true);
      const ran = await runMoneyModel({
        sys,
        numRuns: 4,
        maxCommands: 30,
        seed: SUITE_MONEY_MODEL_SEED,
        timeLimitMs: 60_000,
      }).catch((err: Error) => {
        console.error(err.message);
        throw err;
      });
      console.log(`TLS sentinel: ${JSON.stringify(ran)}`);
      expect(ran.byCommand['admit:admitted']).toBeGreaterThan(0);
      // The master lists only the ACL user's connections (ours and the sentinel's).
      const clients = String(await client.call('CLIENT', 'LIST'))
        .trim()
        .split('\n');
      expect(clients.filter((c) => !new RegExp(` user=${redis.username} `).test(c))).toEqual([]);
    } finally {
      await sys.close();
    }
  }, 180_000);

  it('should be refused without the client certificate, and with a wrong sentinel password', async () => {
    const { REDIS_TLS_CERT_FILE: _cert, REDIS_TLS_KEY_FILE: _key, ...noCertificate } = vars;
    const refusals: string[] = [];
    for (const attempt of [noCertificate, { ...vars, REDIS_SENTINEL_PASSWORD: 'not-the-password' }]) {
      const client = createRedisClient(redisConfigFrom(BASE_ENV_SCHEMA.parse(attempt)), { lazyConnect: true });
      // ioredis keeps retrying the sentinels; its first error event says why they refused.
      const refused = new Promise<Error>((resolve) => client.once('error', resolve));
      void client.connect().catch(() => undefined);
      refusals.push((await refused).message);
      client.disconnect();
    }
    // The sentinel's TLS closes a connection with no client certificate; the same settings with it answer.
    expect(refusals[0]).toMatch(/All sentinels are unreachable.*Connection is closed/);
    expect(refusals[1]).toMatch(/All sentinels are unreachable.*WRONGPASS/);
    const control = createRedisClient(redisConfigFrom(BASE_ENV_SCHEMA.parse(vars)));
    try {
      expect(await control.ping()).toBe('PONG');
    } finally {
      control.disconnect();
    }
    // Neither error carries a secret.
    for (const message of refusals) {
      expect(message).not.toContain(redis.password);
      expect(message).not.toContain(sentinel.password);
    }
  }, 60_000);
});
