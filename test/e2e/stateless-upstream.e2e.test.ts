import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResult,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { PrismaClient } from '@prisma/client';
import { PrismaPg } from '@prisma/adapter-pg';
import { QueueName } from '@tollgate/queue';
import { callMeta, connectAgent, textOf, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConformanceServer, startConformanceServer } from '../fixtures/conformance-server';
import { RunningPlatform, startPlatform } from '../support/platform';

const REVISION = '2026-07-28';
const META = 'io.modelcontextprotocol/';
const PER_CALL = 25;

/**
 * An upstream that speaks only MCP 2026-07-28 (the conformance fixture in stateless-only mode:
 * initialize refused, no session) behind the governed edge: its tools sync, and agents of both
 * revisions call them; what it asks through input-required results reaches the agent's client.
 */
describe('a 2026-07-28-only upstream behind the edge', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let fixture: ConformanceServer;
  let key: string;
  let nextId = 1;
  const agents: Client[] = [];

  async function capableAgent(): Promise<Client> {
    const agent = new Client(
      { name: 'capable-agent', version: '1.0.0' },
      { capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} } },
    );
    agent.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [{ uri: 'file:///work/project', name: 'project' }],
    }));
    agent.setRequestHandler(CreateMessageRequestSchema, async () => ({
      model: 'agent-model',
      role: 'assistant',
      content: { type: 'text', text: 'Paris' },
    }));
    agent.setRequestHandler(ElicitRequestSchema, async (req) => {
      const field = Object.keys(
        (req.params as { requestedSchema: { properties: object } }).requestedSchema.properties,
      )[0];
      return { action: 'accept', content: { [field]: field === 'color' ? 'green' : 'Ada' } };
    });
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(`${p.edgeUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    agents.push(agent);
    return agent;
  }

  const post = async (
    method: string,
    params: Record<string, unknown>,
    caps: Record<string, unknown> = {},
  ): Promise<Record<string, any>> => {
    const res = await fetch(`${p.edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': REVISION,
        'mcp-method': method,
        ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: nextId++,
        method,
        params: { ...params, _meta: { [`${META}protocolVersion`]: REVISION, [`${META}clientCapabilities`]: caps } },
      }),
    });
    const text = await res.text();
    if (!res.headers.get('content-type')?.includes('text/event-stream')) return JSON.parse(text);
    const messages = text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    return messages.find((m) => m.id !== undefined);
  };

  async function ledgerRow(result: CallToolResult | Record<string, any>) {
    const callId = callMeta(result as CallToolResult)!.callId;
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callId]);
    return db.usageEvent.findFirstOrThrow({ where: { id: callId } });
  }

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startConformanceServer({ statelessOnly: true });
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Stateless up', slug: 'stateless-up' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 's@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
      allow: ['next:*'],
      deny: [],
      resourceAllow: ['next:*'],
      promptAllow: ['next:*'],
    });
    const upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'next',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
        callTimeoutMs: 20_000,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    expect(
      (await p.admin('POST', `/v1/orgs/${orgId}/prices`, { upstreamId, toolPattern: '*', perCallMicros: PER_CALL }))
        .status,
    ).toBe(201);
    key = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'stateless-up', disclosureMode: 'FULL' })
    ).body.secret;
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(agents.map((a) => a.close()));
    await p?.close();
    await fixture?.close();
    await db?.$disconnect();
  });

  it('should sync the tools of an upstream that refuses initialize and answers server/discover', async () => {
    const agent = await connectAgent(p.edgeUrl, key);
    agents.push(agent);
    const names = (await agent.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'next__test_simple_text',
        'next__test_input_required_result_elicitation',
        'next__test_header_param',
      ]),
    );
  });

  it('should let a 2025-11-25 agent call its tools, governed, with progress relayed', async () => {
    const agent = await connectAgent(p.edgeUrl, key);
    agents.push(agent);
    const simple = (await agent.callTool({ name: 'next__test_simple_text', arguments: {} })) as CallToolResult;
    expect(simple.isError).toBeFalsy();
    expect(textOf(simple)).toContain('This is a simple text response for testing.');
    const row = await ledgerRow(simple);
    expect([row.toolName, Number(row.costMicros), row.outcome]).toEqual(['test_simple_text', PER_CALL, 'OK']);

    // The routing header the upstream checks (Mcp-Param-Region) is sent by the edge's client.
    const header = (await agent.callTool({
      name: 'next__test_header_param',
      arguments: { region: 'eu-west' },
    })) as CallToolResult;
    expect(textOf(header)).toBe('Region: eu-west');

    const progress: Progress[] = [];
    const slow = (await agent.callTool({ name: 'next__test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (x) => progress.push(x),
    })) as CallToolResult;
    expect(slow.isError).toBeFalsy();
    expect(progress.map((x) => x.progress)).toEqual(expect.arrayContaining([0, 50]));
  });

  it("should ask a 2025-11-25 agent's client what the upstream's input-required results ask, over rounds", async () => {
    const agent = await capableAgent();
    const hello = (await agent.callTool({
      name: 'next__test_input_required_result_elicitation',
      arguments: {},
    })) as CallToolResult;
    expect(textOf(hello)).toBe('Hello, Ada!');
    const sampled = (await agent.callTool({
      name: 'next__test_input_required_result_sampling',
      arguments: {},
    })) as CallToolResult;
    expect(textOf(sampled)).toBe('The model answered: Paris');
    const rounds = (await agent.callTool({
      name: 'next__test_input_required_result_multi_round',
      arguments: {},
    })) as CallToolResult;
    expect(textOf(rounds)).toBe('Ada likes green');
    const all = (await agent.callTool({
      name: 'next__test_input_required_result_multiple_inputs',
      arguments: {},
    })) as CallToolResult;
    expect(textOf(all)).toBe('Paris Ada; roots: file:///work/project');
    const row = await ledgerRow(rounds);
    expect([row.toolName, Number(row.costMicros), row.outcome]).toEqual([
      'test_input_required_result_multi_round',
      PER_CALL,
      'OK',
    ]);
  });

  it('should read its resources and get its prompts; a prompt that asks for input goes through rounds with a 2026-07-28 agent', async () => {
    const agent = await capableAgent();
    const read = await agent.readResource({ uri: 'test://static-text' });
    expect(read.contents[0]).toMatchObject({ uri: 'test://static-text', text: expect.any(String) });
    expect(read).not.toHaveProperty('ttlMs');
    const simple = await agent.getPrompt({ name: 'next__test_simple_prompt' });
    expect(simple.messages.length).toBeGreaterThan(0);

    const get = { name: 'next__test_input_required_result_prompt' };
    const caps = { elicitation: {} };
    const first = await post('prompts/get', get, caps);
    expect(first.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
    const [inputKey] = Object.keys(first.result.inputRequests as object);
    const done = await post(
      'prompts/get',
      {
        ...get,
        inputResponses: { [inputKey]: { action: 'accept', content: { context: 'Ada' } } },
        requestState: first.result.requestState,
      },
      caps,
    );
    expect(JSON.stringify(done.result.messages)).toContain('Answer with this context in mind: Ada');
  });

  it('should fail the call of an agent whose client cannot answer, naming the capability', async () => {
    const agent = await connectAgent(p.edgeUrl, key);
    agents.push(agent);
    const result = (await agent.callTool({
      name: 'next__test_input_required_result_elicitation',
      arguments: {},
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('elicitation');
  });

  it('should hand a 2026-07-28 agent the upstream input-required result and finish on its retry', async () => {
    const call = { name: 'next__test_input_required_result_elicitation', arguments: {} };
    const caps = { elicitation: {} };
    const first = await post('tools/call', call, caps);
    expect(first.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
    const [[inputKey, asked]] = Object.entries(first.result.inputRequests as Record<string, { method: string }>);
    expect(asked).toMatchObject({ method: 'elicitation/create' });
    const done = await post(
      'tools/call',
      {
        ...call,
        inputResponses: { [inputKey]: { action: 'accept', content: { name: 'Grace' } } },
        requestState: first.result.requestState,
      },
      caps,
    );
    expect(done.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Hello, Grace!' }] });
    const row = await ledgerRow(done.result);
    expect([row.toolName, Number(row.costMicros), row.outcome]).toEqual([
      'test_input_required_result_elicitation',
      PER_CALL,
      'OK',
    ]);

    // A client that declared no elicitation: the call fails naming the capability it lacks.
    const unable = await post('tools/call', call, {});
    expect(unable.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: expect.anything() } },
    });

    const plain = await post('tools/call', { name: 'next__test_simple_text', arguments: {} });
    expect(plain.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text' }] });
  });
});
