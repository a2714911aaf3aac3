import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobName, QueueName } from '@tollgate/queue';
import { connectAgent, testBullOptions, toolError, waitForJobs } from '@tollgate/testing';
import { RunningPlatform, startPlatform } from '../support/platform';

/**
 * The three apps in one process, as every e2e file runs them: Nest keeps one logger per process
 * (the last app created, the edge, would name every line), so each line must take its app's name
 * from the scope it runs in.
 */
describe('log lines of apps sharing a process', () => {
  let p: RunningPlatform;
  const lines: Record<string, unknown>[] = [];
  const realWrite = process.stdout.write.bind(process.stdout);

  beforeAll(async () => {
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      for (const line of String(chunk).split('\n')) if (line.startsWith('{')) lines.push(JSON.parse(line));
      return realWrite(chunk, ...rest);
    }) as never;
    p = await startPlatform({ LOG_LEVEL: 'log', LOG_FORMAT: 'json', EDGE_ACCESS_LOG_SAMPLE: '1' });
  });

  afterAll(async () => {
    process.stdout.write = realWrite;
    await p?.close();
  });

  /** The `app` of every line matching `what`, at least one. */
  function appsOf(what: (line: Record<string, unknown>) => boolean): unknown[] {
    const apps = lines.filter(what).map((l) => l.app);
    expect(apps.length).toBeGreaterThan(0);
    return [...new Set(apps)];
  }

  it('should name the worker in the log line of a job the worker ran', async () => {
    const upstreamId = randomUUID();
    const queue = new Queue(QueueName.CatalogSync, testBullOptions(p.env.redisUrl, p.env.redisPrefix));
    try {
      // A sync of an upstream that does not exist: the processor logs that it discards it.
      const job = await queue.add(
        JobName.SyncUpstream,
        { orgId: randomUUID(), upstreamId, trigger: 'admin' },
        { jobId: `log-names-${upstreamId}`, attempts: 1 },
      );
      await expect(waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [job.id!])).rejects.toThrow();
    } finally {
      await queue.close();
    }
    expect(appsOf((l) => String(l.msg).includes(`sync of upstream ${upstreamId}`))).toEqual(['worker']);
  });

  it('should name the edge in the access log line of a call and the admin API in its request line', async () => {
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Logs', slug: 'logs' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'platform' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'ada@logs.test' })).body.id;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId })).status).toBe(201);
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'agent' });
    expect(key.status).toBe(201);
    const agent = await connectAgent(p.edgeUrl, key.body.secret);
    try {
      const result = await agent.callTool({ name: 'nowhere__nothing', arguments: {} });
      expect(toolError(result as never)?.code).toBe('UNKNOWN_TOOL');
    } finally {
      await agent.close();
    }
    expect(appsOf((l) => l.context === 'Access' && l.tool === 'nowhere__nothing')).toEqual(['edge']);
    expect(appsOf((l) => l.context === 'HTTP' && String(l.msg).startsWith(`POST /v1/orgs/${orgId}/keys 201`))).toEqual([
      'admin-api',
    ]);
  });
});
