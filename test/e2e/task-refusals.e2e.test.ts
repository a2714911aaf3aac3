import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { RefusalWatch, connectAgent, waitForTrailSteps, watchRefusedCalls } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TasksServer, startTasksServer } from '../fixtures/tasks-server';
import { GovernedUpstream, governUpstream } from '../support/governed-upstream';
import { RunningPlatform, startPlatform } from '../support/platform';
import { statelessRpc } from '../support/stateless-rpc';

// A 2025-11-25 agent's task-augmented tools/call (`params.task`) that the edge itself refuses: how
// the refusal reaches a real SDK 1.32 client, and that it is counted like any refusal.
describe('Task-augmented calls the edge refuses', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let upstream: TasksServer;
  let gov: GovernedUpstream;
  let watch: RefusalWatch;
  const clients: Client[] = [];
  const range = `from=${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}&to=${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}`;

  async function agent(key: string): Promise<Client> {
    const client = await connectAgent(p.edgeUrl, key, 'task-refusals-e2e');
    clients.push(client);
    return client;
  }

  const askTask = (client: Client, name: string, args: Record<string, unknown>) =>
    client
      .request(
        { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      )
      .then(
        () => {
          throw new Error(`${name}: a task was created`);
        },
        (e: unknown) => e as McpError,
      );

  async function refusalsCounted(code: string): Promise<number> {
    const res = await fetch(`${p.edgeUrl}/metrics`, {
      headers: { Authorization: `Bearer ${p.env.vars.METRICS_TOKEN}` },
    });
    const text = await res.text();
    return [...text.matchAll(new RegExp(`^tollgate_edge_refusals_total\\{code="${code}"[^}]*\\} (\\d+)`, 'gm'))]
      .map((m) => Number(m[1]))
      .reduce((a, b) => a + b, 0);
  }

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    upstream = await startTasksServer();
    gov = await governUpstream(p, {
      org: { name: 'Task refusals', slug: 'task-refusals' },
      upstream: { namespace: 'v2', url: upstream.url, callTimeoutMs: 20_000 },
      price: { perCallMicros: 1000n, perOutputTokenMicros: 10n },
      orgMonthlyBudgetMicros: 50_000_000,
    });
    const policy = { allow: ['v2:*'], deny: ['v2:failing_job'] };
    expect((await p.admin('PUT', `/v1/orgs/${gov.orgId}/policies/ORG/${gov.orgId}`, policy)).status).toBe(200);
    watch = await watchRefusedCalls(p.env.redisUrl, p.env.redisPrefix);
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await watch?.close();
    await db?.$disconnect();
    await p?.close();
    await upstream?.close();
  });

  it('should count a task asked of a tool that lists no task support as a refusal, answered -32601', async () => {
    const { key, keyId } = await gov.newKey('forbidden-task');
    const client = await agent(key);
    const countedBefore = await refusalsCounted('TASK_NOT_SUPPORTED');
    const greetsBefore = upstream.calls.get('greet') ?? 0;

    const refused = await askTask(client, 'v2__greet', { name: 'a' });
    expect(refused).toBeInstanceOf(McpError);
    expect(refused).toMatchObject({ code: -32601, data: { code: 'TASK_NOT_SUPPORTED', taskSupport: 'forbidden' } });
    expect(refused.message).toContain('v2__greet does not support task-augmented execution');
    expect(upstream.calls.get('greet') ?? 0).toBe(greetsBefore);

    // Counted and recorded like every refusal: the edge's metric, the per-call log, the agent's trail.
    expect(await refusalsCounted('TASK_NOT_SUPPORTED')).toBe(countedBefore + 1);
    await watch.written(1);
    const logged = await p.admin('GET', `/v1/orgs/${gov.orgId}/calls?${range}&keyId=${keyId}`);
    expect(logged.status, JSON.stringify(logged.body)).toBe(200);
    expect(logged.body.rows).toEqual([
      expect.objectContaining({ outcome: 'REFUSED', code: 'TASK_NOT_SUPPORTED', toolName: 'greet', costMicros: 0 }),
    ]);
    const sessionId = (client.transport as { sessionId?: string }).sessionId!;
    const steps = () => db.trailEvent.count({ where: { orgId: gov.orgId, sessionId, kind: 'CALL' } });
    await waitForTrailSteps(p.env.redisUrl, p.env.redisPrefix, steps, 1);
    const trail = await p.admin(
      'GET',
      `/v1/orgs/${gov.orgId}/trail?sessionId=${encodeURIComponent(sessionId)}&kind=CALL`,
    );
    expect(trail.body.steps).toEqual([expect.objectContaining({ ok: false, code: 'TASK_NOT_SUPPORTED' })]);
  }, 60_000);

  it('should answer a task-augmented call the edge refuses with a JSON-RPC error carrying the refusal body', async () => {
    const { key, keyId } = await gov.newKey('refused-tasks');
    const rule = { scope: 'KEY', scopeId: keyId, toolPattern: 'v2:slow_compute', callsPerWindow: 1, windowSeconds: 60 };
    expect((await p.admin('POST', `/v1/orgs/${gov.orgId}/rate-limits`, rule)).status).toBe(201);
    const client = await agent(key);
    const before = new Map(upstream.calls);
    const written = (await watch.written(0)).length;

    // Policy, unknown tool, arguments against the pinned schema: each its own code and numbers.
    const denied = await askTask(client, 'v2__failing_job', {});
    expect(denied).toBeInstanceOf(McpError);
    expect(denied).toMatchObject({
      code: -32003,
      data: { code: 'TOOL_NOT_ALLOWED', tool: 'v2__failing_job', rule: 'v2:failing_job', scope: 'ORG' },
    });
    expect(denied.message).toContain('Calling "v2__failing_job" is not allowed for this key');
    expect((denied.data as { hint?: unknown }).hint).toEqual(expect.any(String));
    expect(await askTask(client, 'v2__no_such_tool', {})).toMatchObject({
      code: -32003,
      data: { code: 'UNKNOWN_TOOL', tool: 'v2__no_such_tool' },
    });
    expect(await askTask(client, 'v2__slow_compute', { seconds: 'soon' })).toMatchObject({
      code: -32003,
      data: { code: 'INVALID_ARGUMENTS', parameter: 'seconds', charged: false },
    });

    // The rate limit: the first call is a task, the second refused with when to retry. Asked the way
    // the SDK's own task stream asks: its error message carries the body intact.
    const created = await client.request(
      { method: 'tools/call', params: { name: 'v2__slow_compute', arguments: { seconds: 0 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    expect(created.task.status).toBe('working');
    const stream = client.experimental.tasks.callToolStream(
      { name: 'v2__slow_compute', arguments: { seconds: 0 } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    );
    const messages = [];
    for await (const m of stream) messages.push(m);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      type: 'error',
      error: {
        code: -32003,
        data: {
          code: 'RATE_LIMITED',
          limitKind: 'WINDOW',
          callsPerWindow: 1,
          windowSeconds: 60,
          retryAfterMs: expect.any(Number),
        },
      },
    });

    // A hard key budget that cannot pay the per-call price: the budget's numbers.
    const poor = await gov.newKey('poor-tasks');
    const budget = { scope: 'KEY', scopeId: poor.keyId, period: 'DAY', limitMicros: 500 };
    expect((await p.admin('PUT', `/v1/orgs/${gov.orgId}/budgets`, budget)).status).toBe(200);
    expect(await askTask(await agent(poor.key), 'v2__slow_compute', { seconds: 0 })).toMatchObject({
      code: -32003,
      data: { code: 'BUDGET_EXCEEDED', scope: 'KEY', period: 'DAY', limitMicros: 500, availableMicros: 500 },
    });

    // Only the one task reached the upstream; every refusal is recorded, none charged.
    expect(upstream.calls.get('slow_compute')).toBe((before.get('slow_compute') ?? 0) + 1);
    expect(upstream.calls.get('failing_job') ?? 0).toBe(before.get('failing_job') ?? 0);
    await watch.written(written + 5);
    const logged = await p.admin('GET', `/v1/orgs/${gov.orgId}/calls?${range}&outcome=REFUSED`);
    const codes = logged.body.rows
      .filter((r: { keyId: string }) => r.keyId === keyId || r.keyId === poor.keyId)
      .map((r: { code: string }) => r.code)
      .sort();
    expect(codes).toEqual(['BUDGET_EXCEEDED', 'INVALID_ARGUMENTS', 'RATE_LIMITED', 'TOOL_NOT_ALLOWED', 'UNKNOWN_TOOL']);
  }, 60_000);

  it('should answer a 2026-07-28 agent’s refused call as a tool result with the body (the upstream decides on tasks there)', async () => {
    const { key } = await gov.newKey('stateless-refused');
    const answer = await statelessRpc(
      p.edgeUrl,
      key,
      'tools/call',
      { name: 'v2__failing_job', arguments: {} },
      { name: 'task-refusals-e2e', capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    );
    expect(answer.status).toBe(200);
    expect(answer.result).toMatchObject({ isError: true, _meta: { 'tollgate/error': { code: 'TOOL_NOT_ALLOWED' } } });
  }, 60_000);
});
