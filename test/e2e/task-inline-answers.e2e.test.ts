import type { INestApplication } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { connectAgent, waitForUsageEvents } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TasksServer, startTasksServer } from '../fixtures/tasks-server';
import { GovernedUpstream, governUpstream, startAnotherEdge } from '../support/governed-upstream';
import { RunningPlatform, startPlatform } from '../support/platform';

const PER_CALL = 1000n;
const PER_TOKEN = 10n;

// A 2025-11-25 agent asks for a task (`params.task`), and the upstream answers the call at once
// instead (the upstream decides: here a 2026-07-28 server that runs every call in the request), or
// fails before any task exists (down, too slow). What a real SDK 1.32 client reads of each.
describe('Task-augmented calls answered without a task', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let upstream: TasksServer;
  let gone: TasksServer;
  let gov: GovernedUpstream;
  let govGone: GovernedUpstream;
  let govSlow: GovernedUpstream;
  let otherEdge: INestApplication;
  let otherUrl: string;
  const clients: Client[] = [];

  async function agent(edgeUrl: string, key: string): Promise<Client> {
    const client = await connectAgent(edgeUrl, key, 'task-inline-e2e');
    clients.push(client);
    return client;
  }

  const askTask = (client: Client, name: string, args: Record<string, unknown>) =>
    client.request(
      { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    upstream = await startTasksServer();
    upstream.misbehave.answersInline = true;
    // A call timeout no answer here comes near (failing_job takes a second): a short one would time
    // out these calls, and the sync, whenever the machine stalls for the difference.
    gov = await governUpstream(p, {
      org: { name: 'Inline answers', slug: 'inline-answers' },
      upstream: { namespace: 'v2', url: upstream.url, callTimeoutMs: 20_000 },
      price: { perCallMicros: PER_CALL, perOutputTokenMicros: PER_TOKEN },
      orgMonthlyBudgetMicros: 50_000_000,
    });
    // The same upstream with a short call timeout, for a call that never answers within it (long
    // enough still for its sync's few quick requests on a stalled machine).
    govSlow = await governUpstream(p, {
      org: { name: 'Slow upstream', slug: 'slow-upstream' },
      upstream: { namespace: 'slow', url: upstream.url, callTimeoutMs: 2_000 },
      price: { perCallMicros: PER_CALL, perOutputTokenMicros: PER_TOKEN },
    });
    // An upstream synced, then gone.
    gone = await startTasksServer();
    govGone = await governUpstream(p, {
      org: { name: 'Gone upstream', slug: 'gone-upstream' },
      upstream: { namespace: 'gone', url: gone.url, callTimeoutMs: 20_000 },
      price: { perCallMicros: PER_CALL, perOutputTokenMicros: PER_TOKEN },
    });
    await gone.close();
    ({ app: otherEdge, url: otherUrl } = await startAnotherEdge(p));
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await otherEdge?.close();
    await db?.$disconnect();
    await p?.close();
    await upstream?.close();
  });

  it('should answer a result the upstream gave at once as a task already completed, metered once', async () => {
    const { key, keyId } = await gov.newKey('inline');
    const here = await agent(p.edgeUrl, key);
    const there = await agent(otherUrl, key);

    const created = await askTask(here, 'v2__slow_compute', { seconds: 0, label: 'inline' });
    const taskId = created.task.taskId;
    expect(created.task).toMatchObject({ status: 'completed', ttl: 60_000 });
    const callMeta = (created._meta as any)['tollgate/call'];
    expect(callMeta.costMicros).toBeGreaterThan(Number(PER_CALL));

    // Polled on another edge: completed, and its result is the upstream's, with the call's cost.
    const got = await there.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema);
    expect(got).toMatchObject({ taskId, status: 'completed' });
    const result = await there.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: expect.stringContaining('Computed inline in 0s') }]);
    expect(result.isError).toBeUndefined();
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId });
    expect((result._meta as any)['tollgate/call']).toEqual(callMeta);
    const listed = await there.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema);
    expect(listed.tasks).toEqual([expect.objectContaining({ taskId, status: 'completed' })]);

    // Another key's poll: an unknown task.
    const stranger = await agent(otherUrl, (await gov.newKey('stranger')).key);
    const refused = await stranger
      .request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema)
      .catch((e: McpError) => e);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).message).toContain(`Unknown task: ${taskId}`);

    // One ledger row, the polls free; the upstream ran once.
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callMeta.callId]);
    const rows = await db.usageEvent.findMany({ where: { keyId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: callMeta.callId, outcome: 'OK', toolName: 'slow_compute' });
    expect(String(rows[0].costMicros)).toBe(String(callMeta.costMicros));
    expect(upstream.tasks.size).toBe(0);
  }, 60_000);

  it('should give the SDK client’s task stream a tool error the upstream answered at once', async () => {
    const { key, keyId } = await gov.newKey('inline-error');
    const client = await agent(p.edgeUrl, key);
    const stream = client.experimental.tasks.callToolStream(
      { name: 'v2__failing_job', arguments: {} },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    );
    const messages = [];
    for await (const m of stream) messages.push(m);
    expect(messages.map((m) => m.type)).toEqual(['taskCreated', 'taskStatus', 'result']);
    expect(messages[1]).toMatchObject({ task: { status: 'completed' } });
    const result = (messages[2] as { result: { isError?: boolean; content: unknown; _meta: any } }).result;
    expect(result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'The job failed: nothing to compute.' }],
    });
    const callId = result._meta['tollgate/call'].callId as string;
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callId]);
    const rows = await db.usageEvent.findMany({ where: { keyId } });
    expect(rows).toEqual([expect.objectContaining({ id: callId, outcome: 'TOOL_ERROR', toolName: 'failing_job' })]);
  }, 60_000);

  it('should answer an upstream that is down or too slow for a task-augmented call with -32003 and its body', async () => {
    const down = await askTask(await agent(p.edgeUrl, (await govGone.newKey('down')).key), 'gone__slow_compute', {
      seconds: 0,
    }).catch((e: McpError) => e);
    expect(down).toBeInstanceOf(McpError);
    expect(down).toMatchObject({
      code: -32003,
      data: { code: 'UPSTREAM_UNAVAILABLE', tool: 'gone__slow_compute', charged: false, hint: expect.any(String) },
    });

    // Run in the request, for ten minutes against a 5 s call timeout.
    const slow = await askTask(await agent(p.edgeUrl, (await govSlow.newKey('slow')).key), 'slow__slow_compute', {
      seconds: 600,
    }).catch((e: McpError) => e);
    expect(slow).toBeInstanceOf(McpError);
    expect(slow).toMatchObject({
      code: -32003,
      data: { code: 'UPSTREAM_TIMEOUT', tool: 'slow__slow_compute', charged: false, hint: expect.any(String) },
    });
  }, 60_000);
});
