import { randomUUID } from 'node:crypto';
import type { BaseConfig } from '@tollgate/config';
import { RedisService } from '@tollgate/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskRecord, TaskStore } from './task-store.service';

/** Two edges' task stores (each its own Redis connection) of one deployment, on real Redis. */
describe('TaskStore settlement claims', () => {
  const prefix = `tgtest:${randomUUID()}`;
  const services: RedisService[] = [];
  let a: TaskStore;
  let b: TaskStore;

  const store = (): TaskStore => {
    const redis = new RedisService({
      redis: {
        url: '',
        prefix,
        topology: { kind: 'standalone', url: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' },
        completionWait: { replicas: 0, timeoutMs: 1 },
      },
    } as unknown as BaseConfig);
    services.push(redis);
    return new TaskStore(redis);
  };

  const openTask = async (): Promise<TaskRecord> => {
    const record: TaskRecord = {
      taskId: randomUUID(),
      orgId: randomUUID(),
      keyId: 'key',
      upstreamId: 'up',
      upstreamTaskId: 'up-task',
      createdAt: new Date().toISOString(),
      ttlMs: 60_000,
      expiresAt: Date.now() + 60_000,
      state: 'open',
      settlement: '{}',
    };
    await a.open(record);
    return record;
  };

  beforeAll(() => {
    a = store();
    b = store();
  });

  afterAll(async () => {
    await Promise.all(services.map((r) => r.onApplicationShutdown()));
  });

  it('should give a settlement to one edge at a time, say when it was taken again, and to none once settled', async () => {
    const task = await openTask();
    expect(await a.claimSettlement(task.orgId, task.taskId, 60_000)).toEqual({ retaken: false });
    // Held by the first edge: the other gets nothing.
    expect(await b.claimSettlement(task.orgId, task.taskId, 60_000)).toBeNull();
    // The first edge's claim ended without the task being marked settled: taken again, and said so.
    await a.releaseClaim(task.orgId, task.taskId);
    expect(await b.claimSettlement(task.orgId, task.taskId, 60_000)).toEqual({ retaken: true });
    await b.settled(task.orgId, task.taskId, 'settled', { status: 'completed' });
    expect(await a.claimSettlement(task.orgId, task.taskId, 60_000)).toBeNull();
    expect((await a.read(task.orgId, task.taskId))?.state).toBe('settled');
  });

  it('should claim nothing for an unknown task', async () => {
    expect(await a.claimSettlement(randomUUID(), randomUUID(), 60_000)).toBeNull();
  });
});
