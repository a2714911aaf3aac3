import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequest,
  ElicitRequestSchema,
  RELATED_TASK_META_KEY,
} from '@modelcontextprotocol/sdk/types.js';
import { waitForUsageEvents } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TasksServer, startTasksServer } from '../fixtures/tasks-server';
import { GovernedUpstream, governUpstream } from '../support/governed-upstream';
import { RunningPlatform, startPlatform } from '../support/platform';

const PER_CALL = 1000n;
const PER_TOKEN = 10n;

// A task that needs input, bridged across revisions: a 2026-07-28 upstream inlines its input
// requests in `tasks/get` and takes the answers with `tasks/update`; a 2025-11-25 agent (SDK 1.32)
// sees `input_required`, calls `tasks/result`, and is asked on that request's stream.
describe('A task that needs input, from a 2026-07-28 upstream to a 2025-11-25 agent', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let upstream: TasksServer;
  let gov: GovernedUpstream;
  const clients: Client[] = [];

  /** An SDK 1.32 agent that answers form elicitations with `answer(request)`. */
  async function agent(key: string, answer: (request: ElicitRequest) => Record<string, unknown>): Promise<Client> {
    const client = new Client(
      { name: 'task-input-e2e', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler(ElicitRequestSchema, async (request) => answer(request) as never);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${p.edgeUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    upstream = await startTasksServer();
    gov = await governUpstream(p, {
      org: { name: 'Task input', slug: 'task-input' },
      upstream: { namespace: 'v2', url: upstream.url, callTimeoutMs: 20_000 },
      price: { perCallMicros: PER_CALL, perOutputTokenMicros: PER_TOKEN },
      orgMonthlyBudgetMicros: 50_000_000,
    });
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await db?.$disconnect();
    await p?.close();
    await upstream?.close();
  });

  it('should ask the agent on its tasks/result stream, answer the upstream, and meter the task once', async () => {
    const { key, keyId } = await gov.newKey('confirming');
    const asked: ElicitRequest[] = [];
    const client = await agent(key, (request) => {
      asked.push(request);
      return { action: 'accept', content: { confirm: 'yes' } };
    });
    // The SDK's own task stream: created, polled to input_required, then tasks/result.
    const messages = [];
    for await (const m of client.experimental.tasks.callToolStream(
      { name: 'v2__confirm_delete', arguments: { filename: 'a.txt' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    ))
      messages.push(m);
    const created = messages.find((m) => m.type === 'taskCreated');
    const taskId = created?.type === 'taskCreated' ? created.task.taskId : undefined;
    expect(taskId).toEqual(expect.any(String));
    expect(messages.some((m) => m.type === 'taskStatus' && m.task.status === 'input_required')).toBe(true);
    const last = messages.at(-1)!;
    expect(last.type).toBe('result');
    const result = last.type === 'result' ? last.result : undefined;
    expect(result?.content).toEqual([{ type: 'text', text: 'Deleted a.txt' }]);
    expect(result?._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId });

    // Asked once, as the upstream asked it, tied to the edge's task.
    expect(asked).toHaveLength(1);
    expect(asked[0].params).toMatchObject({
      mode: 'form',
      message: 'Delete a.txt?',
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    });

    const callId = (result?._meta as any)['tollgate/call'].callId as string;
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callId]);
    const rows = await db.usageEvent.findMany({ where: { keyId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: callId, outcome: 'OK', toolName: 'confirm_delete' });
    expect(rows[0].costMicros).toBe(PER_CALL + PER_TOKEN * BigInt(rows[0].outputTokens));
  }, 60_000);

  it('should relay two input requests asked at once, each answered under its own key', async () => {
    const { key } = await gov.newKey('two-questions');
    const client = await agent(key, (request) => ({
      action: 'accept',
      content: { name: request.params.message === 'First name?' ? 'Ada' : 'Grace' },
    }));
    const created = await client.request(
      { method: 'tools/call', params: { name: 'v2__multi_input', arguments: {}, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    // tasks/result waits through the input rounds to the end.
    const result = await client.request(
      { method: 'tasks/result', params: { taskId: created.task.taskId } },
      CallToolResultSchema,
    );
    expect(result.content).toEqual([
      { type: 'text', text: `Got ${JSON.stringify({ name: 'Ada' })} and ${JSON.stringify({ name: 'Grace' })}` },
    ]);
  }, 60_000);
});
