import type { INestApplication } from '@nestjs/common';
import { loadAdminConfig } from '@tollgate/config';
import { createTestEnv, dropDatabase, TestEnv } from '@tollgate/testing';
import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp } from '../../apps/admin-api/src/admin-app';

/** A TCP proxy to the shared Postgres that this test can cut (the shared server itself is never touched). */
class PostgresProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  async open(port = 0): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(5432, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Refuses new connections and drops the open ones, as a Postgres that went away. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Our own redis-server, on a free port, that the test kills. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  child.stdout!.resume();
  return child;
}

describe('admin API when Postgres or Redis is down', () => {
  let env: TestEnv;
  let app: INestApplication;
  let redis: ChildProcess | null = null;
  const proxy = new PostgresProxy();
  let orgId: string;
  let redisPort: number;

  const http = () => request(app.getHttpServer());
  const platform = () => ({ Authorization: `Bearer ${env.adminToken}` });

  beforeAll(async () => {
    redisPort = await freePort();
    redis = await startRedis(redisPort);
    await proxy.open();
    env = await createTestEnv({ REDIS_URL: `redis://127.0.0.1:${redisPort}` });
    const dbUrl = new URL(env.vars.DATABASE_URL);
    dbUrl.port = String(proxy.port);
    app = await createAdminApp(loadAdminConfig({ ...env.vars, DATABASE_URL: dbUrl.toString() }));
    orgId = (await http().post('/v1/orgs').set(platform()).send({ name: 'Downco', slug: 'downco' })).body.id;
  });

  afterAll(async () => {
    // Close while both are up (the tests bring them back), then take down what is ours.
    await app?.close();
    await proxy.cut();
    if (redis && redis.exitCode === null) {
      redis.kill('SIGKILL');
      await once(redis, 'exit');
    }
    // Our redis-server is gone with its keys; only the database needs dropping.
    if (env) await dropDatabase(env.databaseName);
  });

  it('should answer 503 with Retry-After naming the database when Postgres is unreachable, and recover', async () => {
    const port = proxy.port;
    await proxy.cut();
    try {
      const res = await http().get(`/v1/orgs/${orgId}/teams`).set(platform());
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect(res.body).toMatchObject({ statusCode: 503, code: 'DEPENDENCY_UNAVAILABLE', dependency: 'database' });

      const write = await http().post(`/v1/orgs/${orgId}/teams`).set(platform()).send({ name: 'while-down' });
      expect(write.status).toBe(503);
      expect(write.body.dependency).toBe('database');

      const ready = await http().get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.headers['retry-after']).toMatch(/^\d+$/);
      expect(ready.body).toMatchObject({ status: 'unavailable', checks: { db: 'failed', redis: 'ok' } });
      expect((await http().get('/healthz')).status).toBe(200);
    } finally {
      await proxy.open(port);
    }
    expect((await http().get(`/v1/orgs/${orgId}/teams`).set(platform())).status).toBe(200);
    expect((await http().get('/readyz')).status).toBe(200);
  });

  it('should answer 503 with Retry-After naming Redis when Redis is unreachable', async () => {
    redis!.kill('SIGKILL');
    await once(redis!, 'exit');

    // A budget is written to Postgres, then its counter is set up in Redis.
    const res = await http()
      .put(`/v1/orgs/${orgId}/budgets`)
      .set(platform())
      .send({ scope: 'ORG', scopeId: orgId, period: 'MONTH', limitMicros: 1_000_000 });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(res.body).toMatchObject({ statusCode: 503, code: 'DEPENDENCY_UNAVAILABLE', dependency: 'redis' });

    // A job for the worker goes through BullMQ's own connection to Redis.
    const job = await http().post(`/v1/orgs/${orgId}/tools/tier-scores`).set(platform()).send({});
    expect(job.status).toBe(503);
    expect(job.body.dependency).toBe('redis');

    const ready = await http().get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers['retry-after']).toMatch(/^\d+$/);
    expect(ready.body).toMatchObject({ checks: { db: 'ok', redis: 'failed' } });

    // Redis back on its port: ioredis reconnects on its own backoff timer, so ask until ready.
    redis = await startRedis(redisPort);
    const deadline = Date.now() + 20_000;
    let status = 0;
    while (Date.now() < deadline && (status = (await http().get('/readyz')).status) !== 200)
      await new Promise((r) => setTimeout(r, 200));
    expect(status).toBe(200);
    // Jobs go through again too, once BullMQ's own connection is back (it reconnects on its own timer).
    await expect
      .poll(async () => (await http().post(`/v1/orgs/${orgId}/tools/tier-scores`).set(platform()).send({})).status, {
        timeout: 20_000,
        interval: 200,
      })
      .toBeLessThan(300);
  });
});
