import type { INestApplication } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequest,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { waitForUsageEvents } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionTasksServer, startSessionTasksServer } from '../fixtures/session-tasks-server';
import { GovernedUpstream, governUpstream, startAnotherEdge } from '../support/governed-upstream';
import { RunningPlatform, startPlatform } from '../support/platform';
import { StatelessAnswer, statelessRpc } from '../support/stateless-rpc';

const TASKS = 'io.modelcontextprotocol/tasks';
const RELATED = 'io.modelcontextprotocol/related-task';
const PER_CALL = 1000n;
const PER_TOKEN = 10n;
/** What a 2026-07-28 agent that can answer form elicitations declares. */
const ELICITING = { extensions: { [TASKS]: {} }, elicitation: {} };
/** One that declared the tasks extension and nothing it could be asked. */
const TASKS_ONLY = { extensions: { [TASKS]: {} } };

type Answer = StatelessAnswer;

/** One 2026-07-28 request, as a client of that revision sends it, declaring `caps`. */
const rpc = (
  edgeUrl: string,
  key: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = ELICITING,
) => statelessRpc(edgeUrl, key, method, params, { name: 'task-input-reverse-e2e', capabilities });

/**
 * Polls until the task asks for input with its requests inlined (or ends, or reads input_required
 * with nothing inlined as it did before the bridge): each poll is the agent's, no timer.
 */
async function untilAsked(edgeUrl: string, key: string, taskId: string): Promise<Answer> {
  for (;;) {
    const got = await rpc(edgeUrl, key, 'tasks/get', { taskId });
    const status = got.result?.status;
    const inlined = got.result?.inputRequests;
    const waiting =
      status === 'working' ||
      (status === 'input_required' && typeof inlined === 'object' && Object.keys(inlined).length === 0);
    if (!waiting) return got;
  }
}

async function untilEnded(edgeUrl: string, key: string, taskId: string): Promise<Answer> {
  for (;;) {
    const got = await rpc(edgeUrl, key, 'tasks/get', { taskId });
    if (got.error || !['working', 'input_required'].includes(got.result?.status)) return got;
  }
}

// A 2026-07-28 agent (tasks extension) whose call became a task on an SDK 1.32 upstream of
// 2025-11-25 that asks the client something inside the task: the upstream delivers its request
// only on a tasks/result of the session that created the task, which the creating edge holds; the
// agent reads it in tasks/get and answers with tasks/update, on any edge.
describe('A 2025-11-25 upstream’s task that needs input, for a 2026-07-28 agent', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let upstream: SessionTasksServer;
  let gov: GovernedUpstream;
  let otherEdge: INestApplication;
  let otherUrl: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    upstream = await startSessionTasksServer({ streamedAnswers: true });
    gov = await governUpstream(p, {
      org: { name: 'Reverse task input', slug: 'reverse-task-input' },
      upstream: { namespace: 'v1', url: upstream.url, callTimeoutMs: 20_000 },
      price: { perCallMicros: PER_CALL, perOutputTokenMicros: PER_TOKEN },
      orgMonthlyBudgetMicros: 50_000_000,
    });
    ({ app: otherEdge, url: otherUrl } = await startAnotherEdge(p));
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await otherEdge?.close();
    await db?.$disconnect();
    await p?.close();
    await upstream?.close();
  });

  it('should inline the upstream’s question on another edge, take the answer there, and meter the task once', async () => {
    const { key, keyId } = await gov.newKey('answers-elsewhere');
    const created = await rpc(p.edgeUrl, key, 'tools/call', {
      name: 'v1__confirm_job',
      arguments: { filename: 'a.txt' },
    });
    expect(created.result).toMatchObject({ resultType: 'task' });
    const taskId = created.result!.taskId as string;
    const callId = created.result!._meta['tollgate/call'].callId as string;

    // Polled on the edge that did not create it: the question the upstream asked is inlined.
    const asked = await untilAsked(otherUrl, key, taskId);
    expect(asked.result?.status).toBe('input_required');
    const requests = Object.entries(asked.result!.inputRequests as Record<string, any>);
    expect(requests).toHaveLength(1);
    const [inputKey, request] = requests[0];
    expect(request).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', message: 'Delete a.txt?', _meta: { [RELATED]: { taskId } } },
    });
    // Under the same key on the creating edge.
    const here = await rpc(p.edgeUrl, key, 'tasks/get', { taskId });
    expect(Object.keys(here.result?.inputRequests ?? {})).toEqual([inputKey]);

    // Another key neither sees nor answers it.
    const { key: otherKey } = await gov.newKey('someone-else');
    expect((await rpc(otherUrl, otherKey, 'tasks/get', { taskId })).error).toMatchObject({ code: -32602 });
    const foreign = await rpc(otherUrl, otherKey, 'tasks/update', {
      taskId,
      inputResponses: { [inputKey]: { action: 'accept', content: { confirm: 'yes' } } },
    });
    expect(foreign.error).toMatchObject({ code: -32602 });

    // A request of the key that did not declare elicitation cannot answer it: -32021 naming it.
    const undeclared = await rpc(
      otherUrl,
      key,
      'tasks/update',
      { taskId, inputResponses: { [inputKey]: { action: 'accept', content: { confirm: 'yes' } } } },
      TASKS_ONLY,
    );
    expect(undeclared.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: {} } },
    });
    const still = await rpc(otherUrl, key, 'tasks/get', { taskId });
    expect(still.result).toMatchObject({ status: 'input_required', inputRequests: { [inputKey]: request } });

    // Answered on the other edge: it reaches the upstream through the creating edge.
    const updated = await rpc(otherUrl, key, 'tasks/update', {
      taskId,
      inputResponses: { [inputKey]: { action: 'accept', content: { confirm: 'yes' } } },
    });
    expect(updated.error).toBeUndefined();
    const done = await untilEnded(otherUrl, key, taskId);
    expect(done.result).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Deleted a.txt' }] },
    });
    const meta = done.result!.result._meta['tollgate/call'];
    expect(meta.callId).toBe(callId);
    // Both edges answer the one settled result.
    expect((await rpc(p.edgeUrl, key, 'tasks/get', { taskId })).result).toEqual(done.result);

    await waitForUsageEvents(p.env.redis, p.env.redisPrefix, [callId]);
    const rows = await db.usageEvent.findMany({ where: { keyId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'OK', toolName: 'confirm_job' });
    expect(rows[0].costMicros).toBe(PER_CALL + PER_TOKEN * BigInt(rows[0].outputTokens));
    expect(String(rows[0].costMicros)).toBe(String(meta.costMicros));
  }, 90_000);

  it('should take the answer on the edge that holds the question too', async () => {
    const { key, keyId } = await gov.newKey('answers-here');
    const created = await rpc(otherUrl, key, 'tools/call', {
      name: 'v1__confirm_job',
      arguments: { filename: 'b.txt' },
    });
    const taskId = created.result!.taskId as string;
    const callId = created.result!._meta['tollgate/call'].callId as string;
    const asked = await untilAsked(p.edgeUrl, key, taskId);
    const [inputKey] = Object.keys(asked.result?.inputRequests ?? {});
    expect(inputKey).toEqual(expect.any(String));
    const updated = await rpc(otherUrl, key, 'tasks/update', {
      taskId,
      inputResponses: { [inputKey]: { action: 'accept', content: { confirm: 'no' } } },
    });
    expect(updated.error).toBeUndefined();
    const done = await untilEnded(p.edgeUrl, key, taskId);
    expect(done.result).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Kept b.txt' }] },
    });
    await waitForUsageEvents(p.env.redis, p.env.redisPrefix, [callId]);
    const rows = await db.usageEvent.findMany({ where: { keyId } });
    expect(rows.map((r) => [r.id, r.outcome])).toEqual([[callId, 'OK']]);
  }, 90_000);

  it('should ask a 2025-11-25 agent on its tasks/result stream on another edge, and answer the upstream through the holder', async () => {
    const { key, keyId } = await gov.newKey('old-agent');
    const asked: ElicitRequest[] = [];
    const connect = async (edgeUrl: string) => {
      const client = new Client(
        { name: 'task-input-reverse-e2e', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } } },
      );
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request);
        return { action: 'accept', content: { confirm: 'yes' } };
      });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${edgeUrl}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${key}` } },
        }),
      );
      clients.push(client);
      return client;
    };
    const creating = await connect(otherUrl);
    const created = await creating.request(
      {
        method: 'tools/call',
        params: { name: 'v1__confirm_job', arguments: { filename: 'c.txt' }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    // Awaited on the edge that did not create it: asked there once, answered through the holder.
    const waiting = await connect(p.edgeUrl);
    const result = await waiting.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'Deleted c.txt' }]);
    expect(asked).toHaveLength(1);
    expect(asked[0].params).toMatchObject({ message: 'Delete c.txt?', _meta: { [RELATED]: { taskId } } });
    const callId = (result._meta as any)['tollgate/call'].callId as string;
    await waitForUsageEvents(p.env.redis, p.env.redisPrefix, [callId]);
    const rows = await db.usageEvent.findMany({ where: { keyId } });
    expect(rows.map((r) => [r.id, r.outcome])).toEqual([[callId, 'OK']]);
  }, 90_000);

  it('should cancel a task waiting for input from the edge that does not hold it, settled once as a failed call', async () => {
    const { key, keyId } = await gov.newKey('cancels');
    const created = await rpc(p.edgeUrl, key, 'tools/call', {
      name: 'v1__confirm_job',
      arguments: { filename: 'd.txt' },
    });
    const taskId = created.result!.taskId as string;
    const callId = created.result!._meta['tollgate/call'].callId as string;
    const upstreamTaskId = upstream.created.at(-1)!;
    expect(Object.keys((await untilAsked(otherUrl, key, taskId)).result?.inputRequests ?? {})).toHaveLength(1);
    expect((await rpc(otherUrl, key, 'tasks/cancel', { taskId })).error).toBeUndefined();
    expect((await upstream.task(upstreamTaskId))?.status).toBe('cancelled');
    const after = await rpc(p.edgeUrl, key, 'tasks/get', { taskId });
    expect(after.result).toMatchObject({ status: 'cancelled' });
    expect(after.result).not.toHaveProperty('inputRequests');
    await waitForUsageEvents(p.env.redis, p.env.redisPrefix, [callId]);
    const rows = await db.usageEvent.findMany({ where: { keyId } });
    expect(rows.map((r) => [r.id, r.outcome])).toEqual([[callId, 'UPSTREAM_ERROR']]);
  }, 90_000);
});
