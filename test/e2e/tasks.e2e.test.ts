import type { INestApplication } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { orgKeyOf } from '@tollgate/redis';
import { TestClock, waitForUsageEvents } from '@tollgate/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformance } from '../conformance/run-conformance';
import { TasksServer, startTasksServer } from '../fixtures/tasks-server';
import { EdgeProcess, startEdgeProcess } from '../support/edge-process';
import { GovernedUpstream, governUpstream, startAnotherEdge } from '../support/governed-upstream';
import { RunningPlatform, startPlatform } from '../support/platform';
import { StatelessAnswer, statelessRpc } from '../support/stateless-rpc';

const TASKS = 'io.modelcontextprotocol/tasks';
/** The second edge's longest task ttl: longer than the test runs on real time. */
const TTL_MS = 60_000;
const WITH_TASKS = { extensions: { [TASKS]: {} } };
const TASK_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];
const PER_CALL = 1000n;
const PER_TOKEN = 10n;

type Answer = StatelessAnswer;

/** One 2026-07-28 request to an edge, as a client of that revision sends it. */
const rpc = (
  edgeUrl: string,
  key: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = WITH_TASKS,
) => statelessRpc(edgeUrl, key, method, params, { name: 'tasks-e2e', capabilities });

/** Polls tasks/get (on the edge given) until `done` says so. */
async function pollUntil(edgeUrl: string, key: string, taskId: string, done: (a: Answer) => boolean): Promise<Answer> {
  for (;;) {
    const a = await rpc(edgeUrl, key, 'tasks/get', { taskId });
    if (done(a)) return a;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const terminal = (a: Answer) => ['completed', 'failed', 'cancelled'].includes(a.result?.status);

// The tasks extension through the governed edge: an upstream that runs calls as tasks (the
// project's tasks fixture, 2026-07-28 only) behind the edge, unprefixed, with a price and a budget.
describe('Tasks through the edge: relayed, admitted at creation, settled and metered once', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let fixture: TasksServer;
  // The second edge's time: a task's ttl passes when the test moves it (the other edges' is real).
  const clock = new TestClock();
  let clockedEdge: INestApplication;
  let clockedUrl: string;
  let crashing: EdgeProcess | undefined;
  let orgId: string;
  let newKeyOfOrg: GovernedUpstream['newKey'];

  // Each key has a budget of its own, so a test reads its own tasks' counters (settledOnce).
  async function newKey(name: string): Promise<{ key: string; keyId: string }> {
    const { key, keyId } = await newKeyOfOrg(name);
    const budget = { scope: 'KEY', scopeId: keyId, period: 'MONTH', limitMicros: 50_000_000 };
    expect((await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, budget)).status).toBe(200);
    return { key, keyId };
  }

  async function ledgerOf(keyId: string, callId: string) {
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callId]);
    return db.usageEvent.findMany({ where: { keyId } });
  }

  /**
   * The key's one task settled once: one ledger row (the ledger dedups a second settlement, so
   * that alone proves nothing) and its budget counter charged that row's cost once, nothing held.
   */
  async function expectSettledOnce(keyId: string, callId: string) {
    const rows = await ledgerOf(keyId, callId);
    expect(rows).toHaveLength(1);
    const standings = (await p.admin('GET', `/v1/orgs/${orgId}/reports/budgets`)).body as Record<string, unknown>[];
    const standing = standings.find((b) => b.scope === 'KEY' && b.scopeId === keyId);
    expect(standing).toMatchObject({
      source: 'counter',
      spentMicros: Number(rows[0].costMicros),
      reservedMicros: 0,
      leasedMicros: 0,
    });
    return rows;
  }

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startTasksServer();
    ({ orgId, newKey: newKeyOfOrg } = await governUpstream(p, {
      org: { name: 'Tasks', slug: 'tasks' },
      upstream: { namespace: 'jobs', url: fixture.url, callTimeoutMs: 20_000 },
      price: { perCallMicros: PER_CALL, perOutputTokenMicros: PER_TOKEN },
      exposeUnprefixed: true,
      orgMonthlyBudgetMicros: 50_000_000,
    }));
    // A second edge of the same deployment, whose tasks expire after a minute of its clock (moved by the test).
    ({ app: clockedEdge, url: clockedUrl } = await startAnotherEdge(p, { TASK_TTL_MAX_MS: String(TTL_MS) }, clock));
  }, 120_000);

  afterAll(async () => {
    crashing?.child.kill('SIGKILL');
    await clockedEdge?.close();
    await db?.$disconnect();
    await p?.close();
    await fixture?.close();
  });

  it('should pass the conformance suite’s tasks scenarios through the edge', async () => {
    const { key } = await newKey('conformance');
    const failed: Record<string, string[]> = {};
    // At once: each scenario is its own CLI process and its own session, and most of a scenario's
    // time is spent polling a task until it ends.
    await Promise.all(
      TASK_SCENARIOS.map(async (scenario) => {
        const result = await runConformance({
          url: `${p.edgeUrl}/mcp`,
          headers: { Authorization: `Bearer ${key}` },
          scenario,
          timeoutMs: 3 * 60_000,
        });
        if (result.failed.length > 0) failed[scenario] = result.errors[scenario] ?? [result.output];
      }),
    );
    expect(failed).toEqual({});
  }, 900_000);

  it('should settle and meter a completed task once, whichever edge polls it, and keep polls free', async () => {
    const { key, keyId } = await newKey('completed');
    const created = await rpc(p.edgeUrl, key, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1 } });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    expect(created.result).not.toHaveProperty('content');
    const taskId = created.result!.taskId as string;
    const callId = created.result!._meta['tollgate/call'].callId as string;
    // Polled on the other edge until it ends, then again on the first: the same settled answer.
    const done = await pollUntil(clockedUrl, key, taskId, terminal);
    expect(done.result).toMatchObject({ taskId, status: 'completed', resultType: 'complete' });
    const text = done.result!.result.content[0].text as string;
    expect(text).toContain('Computed');
    const meta = done.result!.result._meta['tollgate/call'];
    expect(meta.callId).toBe(callId);
    const again = await rpc(p.edgeUrl, key, 'tasks/get', { taskId });
    expect(again.result!.result).toEqual(done.result!.result);
    const rows = await expectSettledOnce(keyId, callId);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'OK', toolName: 'slow_compute' });
    expect(rows[0].outputTokens).toBeGreaterThan(0);
    expect(rows[0].costMicros).toBe(PER_CALL + PER_TOKEN * BigInt(rows[0].outputTokens));
    expect(String(rows[0].costMicros)).toBe(String(meta.costMicros));
  }, 60_000);

  it('should not charge a task again when an edge died after charging it and before marking it settled', async () => {
    const { key, keyId } = await newKey('retaken');
    const created = await rpc(p.edgeUrl, key, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1 } });
    const taskId = created.result!.taskId as string;
    const callId = created.result!._meta['tollgate/call'].callId as string;
    const done = await pollUntil(p.edgeUrl, key, taskId, terminal);
    await expectSettledOnce(keyId, callId);
    // What the next poll finds when the settling edge died between its completion script and
    // marking the task settled (its claim lapsed): the task open, no answer recorded.
    const redis = new Redis(p.env.redisUrl);
    try {
      const recordKey = orgKeyOf(p.env.redisPrefix, orgId, 'task', taskId);
      await redis.hset(recordKey, 'state', 'open');
      await redis.hdel(recordKey, 'final');
    } finally {
      redis.disconnect();
    }
    const again = await pollUntil(clockedUrl, key, taskId, terminal);
    expect(again.result).toMatchObject({ status: 'completed' });
    expect(again.result!.result.content).toEqual(done.result!.result.content);
    await expectSettledOnce(keyId, callId);
  }, 60_000);

  it('should answer another key’s poll as an unknown task, and a client without the extension -32021', async () => {
    const { key } = await newKey('owner');
    const { key: other } = await newKey('other');
    const created = await rpc(p.edgeUrl, key, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } });
    const taskId = created.result!.taskId as string;
    const foreign = await rpc(p.edgeUrl, other, 'tasks/get', { taskId });
    expect(foreign.error).toMatchObject({ code: -32602, message: `Unknown task: ${taskId}` });
    const undeclared = await rpc(p.edgeUrl, key, 'tasks/get', { taskId }, {});
    expect(undeclared.error).toMatchObject({ code: -32021, data: { requiredCapabilities: WITH_TASKS } });
    expect((await rpc(p.edgeUrl, key, 'tasks/cancel', { taskId })).result).toEqual({ resultType: 'complete' });
  }, 60_000);

  it('should answer a task the agent did not ask for as a failed call, settled and metered at once', async () => {
    const { key, keyId } = await newKey('undeclared');
    fixture.misbehave.tasksRegardless = true;
    let answered: Answer;
    try {
      answered = await rpc(p.edgeUrl, key, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } }, {});
    } finally {
      fixture.misbehave.tasksRegardless = false;
    }
    // The upstream is told to stop the task no one will poll.
    const upstreamTask = [...fixture.tasks.values()].at(-1)!;
    await expect.poll(() => upstreamTask.status).toBe('cancelled');
    // Not a task the agent could never poll, left open with its reservation and unbilled.
    expect(answered.result).toMatchObject({ isError: true });
    expect(answered.result).not.toHaveProperty('taskId');
    const error = answered.result!._meta['tollgate/error'];
    expect(error).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect(error.message).toContain('did not declare the tasks extension');
    const callId = answered.result!._meta['tollgate/call'].callId as string;
    const rows = await expectSettledOnce(keyId, callId);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'UPSTREAM_ERROR' });
  }, 60_000);

  it('should answer a task that could not be recorded as a failed call, and cancel it upstream', async () => {
    const { key, keyId } = await newKey('unrecorded');
    // The deployment's expiry index holds something else: recording any task fails.
    const redis = new Redis(p.env.redisUrl);
    const indexKey = `${p.env.redisPrefix}:tasks:expiring`;
    const index = await redis.zrange(indexKey, '0', '-1', 'WITHSCORES');
    await redis.del(indexKey);
    await redis.set(indexKey, 'not a sorted set');
    let answered: Answer;
    try {
      answered = await rpc(p.edgeUrl, key, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } });
    } finally {
      await redis.del(indexKey);
      for (let i = 0; i < index.length; i += 2) await redis.zadd(indexKey, index[i + 1], index[i]);
      redis.disconnect();
    }
    // The upstream is told to stop the task nobody could poll or settle.
    const upstreamTask = [...fixture.tasks.values()].at(-1)!;
    await expect.poll(() => upstreamTask.status).toBe('cancelled');
    expect(answered.result).toMatchObject({ isError: true });
    expect(answered.result).not.toHaveProperty('taskId');
    const error = answered.result!._meta['tollgate/error'];
    expect(error).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect(error.message).toContain('could not be recorded');
    const callId = answered.result!._meta['tollgate/call'].callId as string;
    const rows = await expectSettledOnce(keyId, callId);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'UPSTREAM_ERROR' });
  }, 60_000);

  it('should settle a cancelled task once, as a failed call, and cancel it upstream', async () => {
    const { key, keyId } = await newKey('cancelled');
    const created = await rpc(p.edgeUrl, key, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } });
    const taskId = created.result!.taskId as string;
    const callId = created.result!._meta['tollgate/call'].callId as string;
    const upstreamTask = [...fixture.tasks.values()].at(-1)!;
    expect((await rpc(clockedUrl, key, 'tasks/cancel', { taskId })).result).toEqual({ resultType: 'complete' });
    expect((await rpc(p.edgeUrl, key, 'tasks/cancel', { taskId })).result).toEqual({ resultType: 'complete' });
    expect((await rpc(p.edgeUrl, key, 'tasks/get', { taskId })).result).toMatchObject({ status: 'cancelled' });
    expect(upstreamTask.status).toBe('cancelled');
    const rows = await expectSettledOnce(keyId, callId);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'UPSTREAM_ERROR', costMicros: 0n });
  }, 60_000);

  it('should expire a task past its ttl with a clear error, cancelled upstream and settled once', async () => {
    const { key, keyId } = await newKey('expiring');
    // The clocked edge's time stands still meanwhile: its ttl passes only as the test moves it.
    clock.freeze();
    const created = await rpc(clockedUrl, key, 'tools/call', { name: 'slow_compute', arguments: { seconds: 600 } });
    expect(created.result).toMatchObject({ resultType: 'task', ttlMs: TTL_MS });
    const taskId = created.result!.taskId as string;
    const callId = created.result!._meta['tollgate/call'].callId as string;
    const upstreamTask = [...fixture.tasks.values()].at(-1)!;
    // A millisecond before its expiry (the edge's sweep has run): still working.
    await clock.elapse(TTL_MS - 1);
    expect((await rpc(p.edgeUrl, key, 'tasks/get', { taskId })).result).toMatchObject({ status: 'working' });
    // At its expiry: the sweep it triggers has cancelled and settled it when elapse resolves.
    await clock.elapse(1);
    clock.resume();
    const expired = await rpc(p.edgeUrl, key, 'tasks/get', { taskId });
    expect(expired.error).toMatchObject({ code: -32602, data: { code: 'TASK_EXPIRED', taskId, ttlMs: TTL_MS } });
    expect(expired.error!.message).toContain('expired');
    expect(upstreamTask.status).toBe('cancelled');
    const rows = await expectSettledOnce(keyId, callId);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'UPSTREAM_ERROR' });
  }, 60_000);

  it('should settle a task once when the edge that created it is killed', async () => {
    const { key, keyId } = await newKey('crash');
    crashing = await startEdgeProcess(p.env.vars);
    const url = `http://127.0.0.1:${crashing.port}`;
    const created = await rpc(url, key, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1 } });
    const taskId = created.result!.taskId as string;
    const callId = created.result!._meta['tollgate/call'].callId as string;
    crashing.child.kill('SIGKILL');
    await crashing.exited;
    const done = await pollUntil(p.edgeUrl, key, taskId, terminal);
    expect(done.result).toMatchObject({ status: 'completed' });
    await rpc(clockedUrl, key, 'tasks/get', { taskId });
    const rows = await expectSettledOnce(keyId, callId);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'OK' });
  }, 120_000);
});
