import type { INestApplication } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
  McpError,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { QueueName } from '@tollgate/queue';
import { TestClock, connectAgent, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionTasksServer, startSessionTasksServer } from '../fixtures/session-tasks-server';
import { TasksServer, startTasksServer } from '../fixtures/tasks-server';
import { startEdgeProcess } from '../support/edge-process';
import { startAnotherEdge } from '../support/governed-upstream';
import { RunningPlatform, startPlatform } from '../support/platform';
import { StatelessAnswer, statelessRpc } from '../support/stateless-rpc';

const TASKS = 'io.modelcontextprotocol/tasks';
const PER_CALL = 1000n;
const PER_TOKEN = 10n;
/** The expiry test's edge's longest task ttl: shorter than the 60 s the agents ask. */
const TTL_MS = 30_000;

type Answer = StatelessAnswer;

/** One 2026-07-28 request (tasks extension declared), as a client of that revision sends it. */
const rpc = (edgeUrl: string, key: string, method: string, params: Record<string, unknown>) =>
  statelessRpc(edgeUrl, key, method, params, {
    name: 'cross-revision-tasks-e2e',
    capabilities: { extensions: { [TASKS]: {} } },
  });

// Tasks bridged between revisions through the governed edge: an SDK 1.32 agent (2025-11-25,
// `params.task`) to an upstream of 2026-07-28 only (the tasks fixture, server-directed tasks), and
// a 2026-07-28 agent (tasks extension) to an SDK 1.32 upstream of 2025-11-25 (`registerToolTask`).
describe('Tasks across revisions: admitted at creation, polled free on any edge, settled once', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let newTasks: TasksServer;
  let oldTasks: SessionTasksServer;
  let otherEdge: INestApplication;
  let otherUrl: string;
  let orgId: string;
  let teamId: string;
  let userId: string;
  const clients: Client[] = [];

  async function newKey(name: string): Promise<{ key: string; keyId: string }> {
    const created = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name })).body;
    return { key: created.secret, keyId: created.key.id as string };
  }

  async function agent(edgeUrl: string, key: string): Promise<Client> {
    const client = await connectAgent(edgeUrl, key, 'cross-revision-tasks-e2e');
    clients.push(client);
    return client;
  }

  async function ledgerOf(keyId: string, callId: string) {
    await waitForUsageEvents(p.env.redis, p.env.redisPrefix, [callId]);
    return db.usageEvent.findMany({ where: { keyId } });
  }

  async function addUpstream(namespace: string, url: string): Promise<void> {
    const upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace,
        transport: 'STREAMABLE_HTTP',
        url,
        callTimeoutMs: 20_000,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redis, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    const price = {
      upstreamId,
      toolPattern: '*',
      perCallMicros: Number(PER_CALL),
      perOutputTokenMicros: Number(PER_TOKEN),
    };
    expect((await p.admin('POST', `/v1/orgs/${orgId}/prices`, price)).status).toBe(201);
  }

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    newTasks = await startTasksServer();
    oldTasks = await startSessionTasksServer();
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Bridged tasks', slug: 'bridged-tasks' })).body.id;
    teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 't@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    await addUpstream('v2', newTasks.url);
    await addUpstream('v1', oldTasks.url);
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['v1:*', 'v2:*'], deny: [] })).status,
    ).toBe(200);
    const budget = { scope: 'ORG', scopeId: orgId, period: 'MONTH', limitMicros: 50_000_000 };
    expect((await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, budget)).status).toBe(200);
    // A second edge of the same deployment.
    ({ app: otherEdge, url: otherUrl } = await startAnotherEdge(p));
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await otherEdge?.close();
    await db?.$disconnect();
    await p?.close();
    await newTasks?.close();
    await oldTasks?.close();
  });

  it('should list each tool’s execution.taskSupport as its upstream declared it, to agents of both revisions', async () => {
    const { key } = await newKey('lists');
    const listed = (await (await agent(p.edgeUrl, key)).listTools()).tools;
    const support = (name: string) => listed.find((t) => t.name === name)?.execution?.taskSupport;
    expect(support('v2__slow_compute')).toBe('optional');
    expect(support('v2__failing_job')).toBe('required');
    expect(support('v2__greet')).toBe('forbidden');
    expect(support('v1__gated_job')).toBe('optional');
    const stateless = (await rpc(p.edgeUrl, key, 'tools/list', {})).result!.tools as Record<string, any>[];
    expect(stateless.find((t) => t.name === 'v2__slow_compute')?.execution).toEqual({ taskSupport: 'optional' });
  }, 60_000);

  it('should run a 2025-11-25 agent’s task on a 2026-07-28 upstream, answer it on another edge and meter it once', async () => {
    const { key, keyId } = await newKey('old-agent');
    const here = await agent(p.edgeUrl, key);
    const there = await agent(otherUrl, key);
    // Working until the test ends it (a timed job could end before the other edge's poll on a slow machine).
    const created = await here.request(
      {
        method: 'tools/call',
        params: { name: 'v2__slow_compute', arguments: { seconds: 600 }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    expect(created.task.status).toBe('working');
    expect(newTasks.tasks.has(taskId)).toBe(false);
    const upstreamTaskId = [...newTasks.tasks.values()].at(-1)!.taskId;
    const callId = (created._meta as any)['tollgate/call'].callId as string;
    expect((await there.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)).status).toBe(
      'working',
    );
    // tasks/result waits for the end, on the other edge.
    const answer = there.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema);
    newTasks.finish(upstreamTaskId, 'Computed on request');
    const result = await answer;
    expect((result.content[0] as { text: string }).text).toBe('Computed on request');
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId });
    const meta = (result._meta as any)['tollgate/call'];
    expect(meta.callId).toBe(callId);
    expect((await here.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)).status).toBe(
      'completed',
    );
    const rows = await ledgerOf(keyId, callId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'OK', toolName: 'slow_compute' });
    expect(rows[0].costMicros).toBe(PER_CALL + PER_TOKEN * BigInt(rows[0].outputTokens));
    expect(String(rows[0].costMicros)).toBe(String(meta.costMicros));
  }, 60_000);

  it('should answer a 2025-11-25 agent’s task request to a tool that lists no task support with -32601, uncalled and uncharged', async () => {
    const { key, keyId } = await newKey('old-agent-forbidden');
    const here = await agent(p.edgeUrl, key);
    const greetsBefore = newTasks.calls.get('greet') ?? 0;
    // The spec's answer for taskSupport "forbidden" (the default): Method not found, before any work.
    const refused = await here
      .request(
        { method: 'tools/call', params: { name: 'v2__greet', arguments: { name: 'a' }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      )
      .catch((e: McpError) => e);
    expect(refused).toBeInstanceOf(McpError);
    expect(refused).toMatchObject({ code: -32601 });
    expect((refused as McpError).message).toContain('v2__greet does not support task-augmented execution');
    expect(newTasks.calls.get('greet') ?? 0).toBe(greetsBefore);
    // The same call without params.task is an ordinary call, and the only one metered.
    const plain = await here.callTool({ name: 'v2__greet', arguments: { name: 'b' } });
    expect(plain.isError).toBeFalsy();
    const callId = (plain._meta as any)['tollgate/call'].callId as string;
    const rows = await ledgerOf(keyId, callId);
    expect(rows.map((r) => [r.id, r.outcome])).toEqual([[callId, 'OK']]);
  }, 60_000);

  it('should settle a bridged task once, in both directions, when the edge that created it is killed', async () => {
    const { key, keyId } = await newKey('crash');
    const crashing = await startEdgeProcess(p.env.vars);
    const url = `http://127.0.0.1:${crashing.port}`;
    try {
      // 2026-07-28 agent, 2025-11-25 upstream; and a 2025-11-25 agent, 2026-07-28 upstream.
      const created = await rpc(url, key, 'tools/call', { name: 'v1__gated_job', arguments: { label: 'e' } });
      expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
      const taskId = created.result!.taskId as string;
      const callId = created.result!._meta['tollgate/call'].callId as string;
      const upstreamTaskId = oldTasks.created.at(-1)!;
      const old = await connectAgent(url, key, 'cross-revision-tasks-e2e');
      const oldCreated = await old.request(
        {
          method: 'tools/call',
          params: { name: 'v2__slow_compute', arguments: { seconds: 1 }, task: { ttl: 60_000 } },
        },
        CreateTaskResultSchema,
      );
      const oldCallId = (oldCreated._meta as any)['tollgate/call'].callId as string;
      crashing.child.kill('SIGKILL');
      await crashing.exited;
      await old.close().catch(() => undefined);
      // Both end while their edge is gone; the edges left answer them and settle each once.
      while ((await oldTasks.task(upstreamTaskId))?.status !== 'completed') await oldTasks.finish('job e done');
      let done: Answer;
      do done = await rpc(p.edgeUrl, key, 'tasks/get', { taskId });
      while (done.result?.status === 'working');
      expect(done.result).toMatchObject({ taskId, status: 'completed' });
      expect(done.result!.result.content).toEqual([{ type: 'text', text: 'job e done' }]);
      const result = await (
        await agent(otherUrl, key)
      ).request({ method: 'tasks/result', params: { taskId: oldCreated.task.taskId } }, CallToolResultSchema);
      expect((result.content[0] as { text: string }).text).toContain('Computed');
      // Asked again on the other edge: the same answers, nothing settled twice.
      expect((await rpc(otherUrl, key, 'tasks/get', { taskId })).result!.result).toEqual(done.result!.result);
      await waitForUsageEvents(p.env.redis, p.env.redisPrefix, [callId, oldCallId]);
      const rows = await db.usageEvent.findMany({ where: { keyId } });
      expect(rows.map((r) => [r.id, r.outcome]).sort()).toEqual(
        [
          [callId, 'OK'],
          [oldCallId, 'OK'],
        ].sort(),
      );
    } finally {
      crashing.child.kill('SIGKILL');
    }
  }, 120_000);

  it('should admit calls of a tool that lists no task support against the edge’s leases, even for an agent that takes tasks', async () => {
    const { key } = await newKey('leased');
    const admissions = async () => {
      const res = await fetch(`${p.edgeUrl}/metrics`, {
        headers: { Authorization: `Bearer ${p.env.vars.METRICS_TOKEN}` },
      });
      const text = await res.text();
      const count = (path: string) =>
        Number(
          new RegExp(`^tollgate_edge_admission_seconds_count\\{path="${path}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0,
        );
      return { lease: count('lease'), redis: count('redis') };
    };
    // The edge takes a lease after the first calls in Redis; the forbidden greet then admits on it.
    const before = await admissions();
    let now = before;
    for (let i = 0; i < 20 && now.lease === before.lease; i++) {
      const greeted = await rpc(p.edgeUrl, key, 'tools/call', { name: 'v2__greet', arguments: { name: 'l' } });
      expect(greeted.result?.isError).toBeFalsy();
      now = await admissions();
    }
    expect(now.lease).toBeGreaterThan(before.lease);
    // A call that may become a task is admitted in Redis, whatever lease the edge holds.
    const created = await rpc(p.edgeUrl, key, 'tools/call', { name: 'v2__slow_compute', arguments: { seconds: 1 } });
    expect(created.result).toMatchObject({ resultType: 'task' });
    const after = await admissions();
    expect(after).toEqual({ lease: now.lease, redis: now.redis + 1 });
    const taskId = created.result!.taskId as string;
    let done: Answer;
    do done = await rpc(p.edgeUrl, key, 'tasks/get', { taskId });
    while (done.result?.status === 'working');
    expect(done.result).toMatchObject({ status: 'completed' });
  }, 60_000);

  it('should cancel a 2025-11-25 agent’s task on a 2026-07-28 upstream and keep it from other keys', async () => {
    const { key, keyId } = await newKey('old-agent-cancel');
    const here = await agent(p.edgeUrl, key);
    const created = await here.request(
      { method: 'tools/call', params: { name: 'v2__slow_compute', arguments: { seconds: 60 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    const callId = (created._meta as any)['tollgate/call'].callId as string;
    const upstreamTask = [...newTasks.tasks.values()].at(-1)!;
    const stranger = await agent(otherUrl, (await newKey('stranger')).key);
    const refused = await stranger
      .request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)
      .catch((e: McpError) => e);
    expect((refused as McpError).message).toContain(`Unknown task: ${taskId}`);
    const cancelled = await (
      await agent(otherUrl, key)
    ).request({ method: 'tasks/cancel', params: { taskId } }, CancelTaskResultSchema);
    expect(cancelled).toMatchObject({ taskId, status: 'cancelled' });
    expect(upstreamTask.status).toBe('cancelled');
    const rows = await ledgerOf(keyId, callId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'UPSTREAM_ERROR', costMicros: 0n });
  }, 60_000);

  it('should run a 2026-07-28 agent’s call as a task of a 2025-11-25 upstream, polled on another edge, metered once', async () => {
    const { key, keyId } = await newKey('new-agent');
    const created = await rpc(p.edgeUrl, key, 'tools/call', { name: 'v1__gated_job', arguments: { label: 'a' } });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = created.result!.taskId as string;
    expect(oldTasks.created).not.toContain(taskId);
    const callId = created.result!._meta['tollgate/call'].callId as string;
    expect((await rpc(otherUrl, key, 'tasks/get', { taskId })).result).toMatchObject({ taskId, status: 'working' });
    await oldTasks.finish('job a done');
    let done: Answer;
    do done = await rpc(otherUrl, key, 'tasks/get', { taskId });
    while (done.result?.status === 'working');
    expect(done.result).toMatchObject({ taskId, status: 'completed' });
    expect(done.result!.result.content).toEqual([{ type: 'text', text: 'job a done' }]);
    const meta = done.result!.result._meta['tollgate/call'];
    expect(meta.callId).toBe(callId);
    expect((await rpc(p.edgeUrl, key, 'tasks/get', { taskId })).result!.result).toEqual(done.result!.result);
    const rows = await ledgerOf(keyId, callId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'OK', toolName: 'gated_job' });
    expect(String(rows[0].costMicros)).toBe(String(meta.costMicros));
  }, 60_000);

  it('should cancel a 2026-07-28 agent’s task on a 2025-11-25 upstream, settled once as a failed call', async () => {
    const { key, keyId } = await newKey('new-agent-cancel');
    const created = await rpc(p.edgeUrl, key, 'tools/call', { name: 'v1__gated_job', arguments: { label: 'b' } });
    const taskId = created.result!.taskId as string;
    const callId = created.result!._meta['tollgate/call'].callId as string;
    const upstreamTaskId = oldTasks.created.at(-1)!;
    expect((await rpc(otherUrl, key, 'tasks/cancel', { taskId })).result).toEqual({ resultType: 'complete' });
    expect((await oldTasks.task(upstreamTaskId))?.status).toBe('cancelled');
    expect((await rpc(p.edgeUrl, key, 'tasks/get', { taskId })).result).toMatchObject({ status: 'cancelled' });
    const rows = await ledgerOf(keyId, callId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'UPSTREAM_ERROR', costMicros: 0n });
  }, 60_000);

  it('should expire a bridged task past its ttl with a clear error, in both directions, settled once', async () => {
    const { key, keyId } = await newKey('expiring');
    // An edge of its own whose clock the test moves a ttl ahead, closed after this test: an edge left
    // ahead would take the later tests' tasks as due once they ran longer than that lead.
    const clock = new TestClock();
    const clocked = await startAnotherEdge(p, { TASK_TTL_MAX_MS: String(TTL_MS) }, clock);
    // Its agent's session closes first: an edge closes once its open streams have ended.
    const old = await connectAgent(clocked.url, key, 'cross-revision-tasks-e2e');
    try {
      // 2026-07-28 agent, 2025-11-25 upstream: the clocked edge keeps the task TTL_MS of its clock.
      const created = await rpc(clocked.url, key, 'tools/call', { name: 'v1__gated_job', arguments: { label: 'c' } });
      expect(created.result).toMatchObject({ resultType: 'task', ttlMs: TTL_MS });
      const taskId = created.result!.taskId as string;
      const callId = created.result!._meta['tollgate/call'].callId as string;
      const upstreamTaskId = oldTasks.created.at(-1)!;
      // 2025-11-25 agent, 2026-07-28 upstream: tasks/result waits for the end, here the expiry.
      const oldCreated = await old.request(
        {
          method: 'tools/call',
          params: { name: 'v2__slow_compute', arguments: { seconds: 60 }, task: { ttl: 60_000 } },
        },
        CreateTaskResultSchema,
      );
      expect(oldCreated.task.ttl).toBe(TTL_MS);
      const oldCallId = (oldCreated._meta as any)['tollgate/call'].callId as string;
      const upstreamTask = [...newTasks.tasks.values()].at(-1)!;
      const expiringOld = (await agent(p.edgeUrl, key))
        .request({ method: 'tasks/result', params: { taskId: oldCreated.task.taskId } }, CallToolResultSchema)
        .catch((e: McpError) => e);
      // The ttl passes on the clocked edge; the sweep that move runs ends both before elapse resolves.
      await clock.elapse(TTL_MS);
      const expiredOld = await expiringOld;
      expect(expiredOld).toMatchObject({ code: -32602, data: { code: 'TASK_EXPIRED', ttlMs: TTL_MS } });
      expect(upstreamTask.status).toBe('cancelled');
      const expired = await rpc(p.edgeUrl, key, 'tasks/get', { taskId });
      expect(expired.error).toMatchObject({ code: -32602, data: { code: 'TASK_EXPIRED', taskId, ttlMs: TTL_MS } });
      expect((await oldTasks.task(upstreamTaskId))?.status).toBe('cancelled');
      await waitForUsageEvents(p.env.redis, p.env.redisPrefix, [callId, oldCallId]);
      const rows = await db.usageEvent.findMany({ where: { keyId } });
      expect(rows.map((r) => [r.id, r.outcome]).sort()).toEqual(
        [
          [callId, 'UPSTREAM_ERROR'],
          [oldCallId, 'UPSTREAM_ERROR'],
        ].sort(),
      );
    } finally {
      await old.close().catch(() => undefined);
      await clocked.app.close();
    }
  }, 120_000);

  it('should list only the key’s own tasks to a 2025-11-25 agent, and tell its session when one ends', async () => {
    const { key } = await newKey('lister');
    const here = await agent(p.edgeUrl, key);
    const statuses: { taskId: string; status: string }[] = [];
    const ended = new Promise<void>((resolve) =>
      here.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
        statuses.push({ taskId: n.params.taskId, status: n.params.status });
        if (n.params.status === 'completed') resolve();
      }),
    );
    const first = await here.request(
      { method: 'tools/call', params: { name: 'v2__slow_compute', arguments: { seconds: 60 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const second = await here.request(
      { method: 'tools/call', params: { name: 'v1__gated_job', arguments: { label: 'd' }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const upstreamTaskId = oldTasks.created.at(-1)!;
    const strangerKey = (await newKey('other-lister')).key;
    const stranger = await agent(otherUrl, strangerKey);
    const theirs = await stranger.request(
      { method: 'tools/call', params: { name: 'v2__slow_compute', arguments: { seconds: 60 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    // Listed on another edge, newest first, as the key's own; the other key sees only its own.
    const listed = await (
      await agent(otherUrl, key)
    ).request({ method: 'tasks/list', params: {} }, ListTasksResultSchema);
    expect(listed.tasks.map((t) => [t.taskId, t.status])).toEqual([
      [second.task.taskId, 'working'],
      [first.task.taskId, 'working'],
    ]);
    expect(listed.nextCursor).toBeUndefined();
    const strangers = await stranger.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema);
    expect(strangers.tasks.map((t) => t.taskId)).toEqual([theirs.task.taskId]);
    // The gated job ends; the edge sees it end on a poll (another edge's) and tells the session.
    while ((await oldTasks.task(upstreamTaskId))?.status !== 'completed') await oldTasks.finish('job d done');
    await (
      await agent(otherUrl, key)
    ).request({ method: 'tasks/result', params: { taskId: second.task.taskId } }, CallToolResultSchema);
    await ended;
    expect(statuses).toEqual([{ taskId: second.task.taskId, status: 'completed' }]);
    const after = await here.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema);
    expect(after.tasks.map((t) => t.status)).toEqual(['completed', 'working']);
  }, 60_000);
});
