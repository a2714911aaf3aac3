import { randomUUID } from 'node:crypto';
import { parseHostPorts, type RedisConfig } from '@tollgate/config';
import { Worker } from 'bullmq';
import { Cluster } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { bullConnection, createRedisClient } from './redis-client.factory';

function clusterConfig(): RedisConfig {
  const nodes = parseHostPorts('cluster', inject('redisClusterNodes'));
  return {
    url: '',
    prefix: 'tgtest',
    topology: { kind: 'cluster', nodes },
    completionWait: { replicas: 0, timeoutMs: 1 },
  };
}

/**
 * `promise`, or a failure naming `label` and the clients' states after `ms`: a hang here (seen once in
 * a full run, 2026-11-27 23:05 UTC, not reproduced in 8 runs under load) then says which step it was.
 */
async function step<T>(label: string, promise: Promise<T>, clients: Cluster[], ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const states = clients.map((c) => `${c.status} with ${c.nodes().length} nodes`).join(', ');
      reject(new Error(`${label} did not finish in ${ms} ms (clients: ${states})`));
    }, ms);
  });
  try {
    return await Promise.race([promise, stalled]);
  } finally {
    clearTimeout(timer);
  }
}

/** Every node connection dropped with a reconnect to follow: where a slot refresh that timed out leaves a cluster. */
async function reconnecting(cluster: Cluster): Promise<void> {
  if (cluster.status !== 'ready') await new Promise((resolve) => cluster.once('ready', resolve));
  const waiting = new Promise((resolve) => cluster.once('reconnecting', resolve));
  cluster.disconnect(true);
  await waiting;
  expect(cluster.nodes()).toHaveLength(0);
}

describe('a Redis Cluster client told to disconnect', () => {
  it('should fail a command sent afterwards at once, where ioredis 6 queued it forever', async () => {
    const cluster = createRedisClient(clusterConfig()) as Cluster;
    await cluster.ping();
    const key = `tgtest:{ending}:${randomUUID()}`;
    await cluster.xgroup('CREATE', key, 'g', '0', 'MKSTREAM');
    // The outbox drain's shape: a blocking read ended by the disconnect, then the batch it had read acknowledged.
    const reading = cluster.xreadgroup('GROUP', 'g', 'c', 'COUNT', 10, 'BLOCK', 1000, 'STREAMS', key, '>');
    cluster.disconnect();
    await expect(reading).rejects.toThrow('Connection is closed');
    const tx = cluster.multi();
    tx.xack(key, 'g', '1-1');
    tx.xdel(key, '1-1');

    await expect(tx.exec()).rejects.toThrow('Connection is closed');
    await expect(cluster.get(key)).rejects.toThrow('Connection is closed');
  });

  it('should work again once connected again (BullMQ reconnects its blocking connection so)', async () => {
    const cluster = createRedisClient(clusterConfig()) as Cluster;
    await cluster.ping();
    const ended = new Promise((resolve) => cluster.once('end', resolve));
    cluster.disconnect();
    await ended;

    await cluster.connect();

    expect(await cluster.ping()).toBe('PONG');
    await cluster.quit();
  });
});

// ioredis 6 ends a cluster only when its last node connection closes: one waiting to reconnect has
// none, so disconnect() left it (and whoever awaited its end) hanging.
describe('a Redis Cluster client stopped while it waits to reconnect', () => {
  it('should end, and fail the commands it held, instead of waiting forever', async () => {
    const cluster = createRedisClient(clusterConfig()) as Cluster;
    await reconnecting(cluster);
    const held = cluster.get(`tgtest:{ending}:${randomUUID()}`);
    const ended = new Promise((resolve) => cluster.once('end', resolve));

    cluster.disconnect();

    await ended;
    expect(cluster.status).toBe('end');
    await expect(held).rejects.toThrow('None of startup nodes is available');
  });

  it('should end its duplicates too (the outbox drain reads on one, BullMQ blocks on one)', async () => {
    const cluster = createRedisClient(clusterConfig()) as Cluster;
    const duplicate = cluster.duplicate([], { enableAutoPipelining: false });
    await reconnecting(duplicate);
    const ended = new Promise((resolve) => duplicate.once('end', resolve));

    duplicate.disconnect();

    await ended;
    cluster.disconnect();
  });

  it('should let a BullMQ worker close while its blocking connection waits to reconnect', async () => {
    const connection = bullConnection(clusterConfig()) as Cluster;
    const worker = new Worker(`ending-${randomUUID()}`, async () => undefined, {
      connection,
      prefix: 'tgtest:{bull}',
    });
    await worker.waitUntilReady();
    // BullMQ's own duplicate of the connection, where the worker waits for jobs.
    const { blockingConnection } = (
      worker as unknown as { backend: { blockingConnection: { client: Promise<Cluster> } } }
    ).backend;
    const blocking = await blockingConnection.client;
    // Dropped to reconnect; BullMQ may get there first itself: its next blocking read finds no
    // nodes and reconnects the cluster (disconnect, which ends an empty one at once, then connect),
    // and ioredis' own `reconnecting` never comes. Either way the worker closes mid-reconnect.
    const dropped = new Promise((resolve) => {
      blocking.once('reconnecting', resolve);
      blocking.once('end', resolve);
    });
    if (blocking.status !== 'ready') await new Promise((resolve) => blocking.once('ready', resolve));
    blocking.disconnect(true);
    await step('the blocking connection dropping to reconnect', dropped, [blocking, connection]);

    await step('the worker closing', worker.close(), [blocking, connection]);

    expect(blocking.status).toBe('end');
    await step('the connection quitting', connection.quit(), [connection]);
  });
});
