import { once } from 'node:events';
import { AddressInfo, createServer, Socket } from 'node:net';
import { INestApplication } from '@nestjs/common';
import { loadAdminConfig, loadWorkerConfig } from '@tollgate/config';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp } from '../../apps/admin-api/src/admin-app';
import { createWorkerApp } from '../../apps/worker/src/worker-app';

/**
 * A worker asked to stop while it syncs an upstream that never answers (a stdio process that reads
 * the handshake and stays silent, with the longest call timeout an admin may set: 10 minutes) must
 * not wait for that timeout: the sync is cancelled, the process is ended, and the upstream is not
 * marked as failed (the job is retried by the next worker).
 */
describe('worker shutdown during a sync of a silent upstream', () => {
  let env: TestEnv;
  let admin: INestApplication;
  let worker: INestApplication | undefined;
  const listener = createServer();
  const silentUpstreams: Socket[] = [];

  beforeAll(async () => {
    env = await createTestEnv();
    admin = await createAdminApp(loadAdminConfig(env.vars));
    await admin.listen(0, '127.0.0.1');
    worker = await createWorkerApp(loadWorkerConfig(env.vars));
    await worker.listen(0, '127.0.0.1');
    listener.on('connection', (socket: Socket) => silentUpstreams.push(socket));
    listener.listen(0, '127.0.0.1');
    await once(listener, 'listening');
  });

  afterAll(async () => {
    await worker?.close();
    await admin?.close();
    listener.close();
    await env?.cleanup();
  });

  it('should cancel the sync, end the upstream process and leave no sync error when the worker closes', async () => {
    const adminUrl = (await admin.getUrl()).replace('[::1]', '127.0.0.1');
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${adminUrl}${path}`, {
        method,
        headers: { Authorization: `Bearer ${env.adminToken}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    const org = await call('POST', '/v1/orgs', { name: 'Shutdown', slug: 'shutdown' });
    const { port } = listener.address() as AddressInfo;
    // On the first bytes of the handshake it tells the test over TCP, then never answers.
    const silent = `process.stdin.once('data', () => require('node:net').connect(${port}, '127.0.0.1')); setInterval(() => {}, 1e9);`;
    const upstream = await call('POST', `/v1/orgs/${org.body.id}/upstreams`, {
      namespace: 'silent',
      transport: 'STDIO',
      command: process.execPath,
      args: ['-e', silent],
      callTimeoutMs: 600_000,
    });
    expect(upstream.status).toBe(201);
    const sync = await call('POST', `/v1/orgs/${org.body.id}/upstreams/${upstream.body.id}/sync`);
    expect(sync.status).toBeLessThan(300);

    // The sync has spawned the upstream and sent the handshake it will never answer.
    if (silentUpstreams.length === 0) await once(listener, 'connection');
    const upstreamProcess = silentUpstreams[0];
    const ended = once(upstreamProcess, 'close');

    // Without the cancellation this waits for the 10-minute call timeout (and the test times out).
    await worker!.close();
    worker = undefined;
    await ended;

    const after = await call('GET', `/v1/orgs/${org.body.id}/upstreams/${upstream.body.id}`);
    expect(after.body.lastSyncError).toBeNull();
    expect(after.body.lastSyncAt).toBeNull();
  });
});
