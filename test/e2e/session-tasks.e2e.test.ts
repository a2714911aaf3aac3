import type { INestApplication } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { TestClock, connectAgent, waitForUsageEvents } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionTasksServer, startSessionTasksServer } from '../fixtures/session-tasks-server';
import { GovernedUpstream, governUpstream, startAnotherEdge } from '../support/governed-upstream';
import { RunningPlatform, startPlatform } from '../support/platform';

const PER_CALL = 1000n;
const PER_TOKEN = 10n;
/** The second edge's longest task ttl: longer than the test runs on real time. */
const TTL_MS = 60_000;

// 2025-11-25 tasks (experimental in that revision) through the governed edge: an SDK 1.32 agent
// asks for a task (`params.task`) of an SDK 1.32 upstream that runs the tool as one, over sessions.
describe('2025-11-25 tasks through the edge: the edge’s own task, polled anywhere, settled once', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let fixture: SessionTasksServer;
  // The second edge's time: a task's ttl passes when the test moves it (the first edge's is real).
  const clock = new TestClock();
  let otherEdge: INestApplication;
  let otherUrl: string;
  let newKey: GovernedUpstream['newKey'];
  const clients: Client[] = [];

  async function agent(edgeUrl: string, key: string): Promise<Client> {
    const client = await connectAgent(edgeUrl, key, 'session-tasks-e2e');
    clients.push(client);
    return client;
  }

  const createTask = (client: Client, label: string) =>
    client.request(
      { method: 'tools/call', params: { name: 'gated_job', arguments: { label }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startSessionTasksServer();
    ({ newKey } = await governUpstream(p, {
      org: { name: 'Session tasks', slug: 'session-tasks' },
      upstream: { namespace: 'jobs', url: fixture.url, callTimeoutMs: 20_000 },
      price: { perCallMicros: PER_CALL, perOutputTokenMicros: PER_TOKEN },
      exposeUnprefixed: true,
      orgMonthlyBudgetMicros: 50_000_000,
    }));
    // A second edge of the same deployment, with its own upstream session, whose tasks expire after a
    // minute of its clock.
    ({ app: otherEdge, url: otherUrl } = await startAnotherEdge(p, { TASK_TTL_MAX_MS: String(TTL_MS) }, clock));
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await otherEdge?.close();
    await db?.$disconnect();
    await p?.close();
    await fixture?.close();
  });

  it('should answer a task under the edge’s own id, poll it on another edge and settle and meter it once', async () => {
    const { key, keyId } = await newKey('completed');
    const here = await agent(p.edgeUrl, key);
    const there = await agent(otherUrl, key);
    const created = await createTask(here, 'one');
    const taskId = created.task.taskId;
    expect(created.task.status).toBe('working');
    expect(fixture.created).not.toContain(taskId);
    const callId = (created._meta as any)['tollgate/call'].callId as string;
    expect((await there.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)).status).toBe(
      'working',
    );
    // tasks/result waits for the end (asked on the other edge before the job ends).
    const payload = there.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema);
    await fixture.finish('job one done');
    const result = await payload;
    expect(result.content).toEqual([{ type: 'text', text: 'job one done' }]);
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId });
    const meta = (result._meta as any)['tollgate/call'];
    expect(meta.callId).toBe(callId);
    expect((await here.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)).status).toBe(
      'completed',
    );
    const again = await here.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema);
    expect(again.content).toEqual(result.content);
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callId]);
    const rows = await db.usageEvent.findMany({ where: { keyId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'OK', toolName: 'gated_job' });
    expect(rows[0].costMicros).toBe(PER_CALL + PER_TOKEN * BigInt(rows[0].outputTokens));
    expect(String(rows[0].costMicros)).toBe(String(meta.costMicros));
  }, 60_000);

  it('should cancel a task upstream, settle it once as a failed call, and keep it from other keys', async () => {
    const { key, keyId } = await newKey('cancelled');
    const here = await agent(p.edgeUrl, key);
    const there = await agent(otherUrl, key);
    const created = await createTask(here, 'two');
    const taskId = created.task.taskId;
    const callId = (created._meta as any)['tollgate/call'].callId as string;
    const upstreamTaskId = fixture.created.at(-1)!;
    const stranger = await agent(otherUrl, (await newKey('stranger')).key);
    const refused = await stranger
      .request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)
      .catch((e: McpError) => e);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).message).toContain(`Unknown task: ${taskId}`);
    const cancelled = await there.request({ method: 'tasks/cancel', params: { taskId } }, CancelTaskResultSchema);
    expect(cancelled).toMatchObject({ taskId, status: 'cancelled' });
    expect((await fixture.task(upstreamTaskId))?.status).toBe('cancelled');
    expect((await here.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)).status).toBe(
      'cancelled',
    );
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callId]);
    const rows = await db.usageEvent.findMany({ where: { keyId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'UPSTREAM_ERROR', costMicros: 0n });
  }, 60_000);

  it('should answer a task past its ttl with a clear error, cancelled upstream and settled once', async () => {
    const { key, keyId } = await newKey('expiring');
    const created = await createTask(await agent(otherUrl, key), 'three');
    expect(created.task.ttl).toBe(TTL_MS);
    const taskId = created.task.taskId;
    const callId = (created._meta as any)['tollgate/call'].callId as string;
    const upstreamTaskId = fixture.created.at(-1)!;
    // tasks/result (on the first edge) waits for the end: here, the expiry, once the second edge's
    // clock has passed the ttl and its sweep (run by that move) has cancelled and settled the task.
    const expiring = (await agent(p.edgeUrl, key))
      .request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema)
      .catch((e: McpError) => e);
    await clock.elapse(TTL_MS);
    const expired = await expiring;
    expect(expired).toBeInstanceOf(McpError);
    expect(expired).toMatchObject({ code: -32602, data: { code: 'TASK_EXPIRED', taskId, ttlMs: TTL_MS } });
    expect((expired as McpError).message).toContain('expired');
    expect((await fixture.task(upstreamTaskId))?.status).toBe('cancelled');
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callId]);
    const rows = await db.usageEvent.findMany({ where: { keyId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'UPSTREAM_ERROR' });
  }, 60_000);
});
