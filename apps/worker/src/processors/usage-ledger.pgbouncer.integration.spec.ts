import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConsoleLogger, INestApplication } from '@nestjs/common';
import { loadWorkerConfig } from '@tollgate/config';
import { UsageEvent, usageOutboxKeys } from '@tollgate/usage';
import { appendToUsageOutbox, createTestEnv, TestEnv, waitForUsageEvents } from '@tollgate/testing';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerApp } from '../worker-app';

/** Debian's pgbouncer (1.18: no prepared statements across transactions in transaction mode). */
const PGBOUNCER = '/usr/sbin/pgbouncer';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts pgbouncer in transaction mode in front of the test Postgres; resolves once it listens. */
async function startPgBouncer(upstream: URL, port: number, dir: string): Promise<ChildProcess> {
  writeFileSync(path.join(dir, 'users.txt'), `"${upstream.username || 'postgres'}" ""\n`);
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${upstream.hostname} port=${upstream.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      // Fewer server connections than the worker's pool: consecutive statements of one client
      // connection land on different server connections, as they do in production.
      'default_pool_size = 2',
      'max_client_conn = 200',
      'ignore_startup_parameters = extra_float_digits,options',
      '',
    ].join('\n'),
  );
  chmodSync(dir, 0o755);
  // pgbouncer refuses to run as root: as root (CI containers) it drops to the postgres user.
  const asRoot = process.getuid?.() === 0 ? ['-u', 'postgres'] : [];
  const child = spawn(PGBOUNCER, [...asRoot, path.join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/process up/.test(output)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`pgbouncer exited (${code}): ${output}`)));
  });
  return child;
}

/** Keeps the worker's error lines: a batch the pooler refused is retried, and would pass unseen. */
class ErrorLog extends ConsoleLogger {
  readonly errors: string[] = [];
  override error(message: unknown, ...rest: unknown[]): void {
    this.errors.push(String(message));
    super.error(message, ...rest);
  }
}

describe('usage ledger through PgBouncer in transaction mode', () => {
  const log = new ErrorLog();
  let env: TestEnv;
  let worker: INestApplication;
  let bouncer: ChildProcess;
  let redis: Redis;
  let direct: Client;
  let dir: string;
  const orgId = randomUUID();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-pgbouncer-'));
    env = await createTestEnv();
    const upstream = new URL(env.vars.DATABASE_URL);
    const port = await freePort();
    bouncer = await startPgBouncer(upstream, port, dir);
    const viaBouncer = new URL(env.vars.DATABASE_URL);
    viaBouncer.port = String(port);
    // Small batches, so the drain is many INSERTs spread over the pooler's server connections.
    const vars = { ...env.vars, DATABASE_URL: viaBouncer.toString(), DATABASE_POOL_SIZE: '8', LEDGER_BATCH_SIZE: '50' };
    worker = await createWorkerApp(loadWorkerConfig(vars)).then((app) => {
      app.useLogger(log);
      return app.init();
    });
    redis = new Redis(env.redisUrl);
    direct = new Client({ connectionString: env.vars.DATABASE_URL });
    await direct.connect();
  });

  afterAll(async () => {
    await redis?.quit();
    await direct?.end();
    await worker?.close();
    if (bouncer && bouncer.exitCode === null) {
      const exited = new Promise((resolve) => bouncer.once('exit', resolve));
      bouncer.kill('SIGTERM');
      await exited;
    }
    await env?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('should drain every usage event into the ledger once, with the rollups equal to the ledger', async () => {
    const events: UsageEvent[] = Array.from({ length: 2_000 }, (_, i) => ({
      id: randomUUID(),
      orgId,
      teamId: '00000000-0000-4000-8000-00000000000a',
      userId: randomUUID(),
      keyId: randomUUID(),
      upstreamId: '00000000-0000-4000-8000-00000000000b',
      toolName: `tool-${i % 7}`,
      outcome: 'OK',
      costMicros: BigInt(1 + i),
      inputTokens: 0,
      outputTokens: 1,
      latencyMs: 2,
      priceRuleId: null,
      occurredAt: new Date(),
    }));
    for (let i = 0; i < 4; i++) await appendToUsageOutbox(redis, env.redisPrefix, events.slice(i * 500, (i + 1) * 500));
    const ids = events.map((e) => e.id);
    await waitForUsageEvents(env.redisUrl, env.redisPrefix, ids);
    // Recorded again (a retry): written nothing more.
    await appendToUsageOutbox(redis, env.redisPrefix, events.slice(0, 500));
    await waitForUsageEvents(env.redisUrl, env.redisPrefix, ids.slice(0, 500));

    const ledger = await direct.query<{ n: string; s: string }>(
      'SELECT count(*) AS n, sum("costMicros")::text AS s FROM "UsageEvent" WHERE "orgId" = $1',
      [orgId],
    );
    const expected = events.reduce((sum, e) => sum + e.costMicros, 0n);
    expect(ledger.rows[0]).toEqual({ n: '2000', s: expected.toString() });
    const rollup = await direct.query<{ s: string }>(
      'SELECT sum("costMicros")::text AS s FROM "UsageKeyDayRollup" WHERE "orgId" = $1',
      [orgId],
    );
    expect(rollup.rows[0].s).toBe(expected.toString());
    expect(await redis.xlen(usageOutboxKeys(env.redisPrefix).events)).toBe(0);
    // Every batch went in at its first attempt (a named prepared statement fails here, then retries).
    expect(log.errors.filter((e) => /usage ledger batch not written/.test(e))).toEqual([]);
  });
});
