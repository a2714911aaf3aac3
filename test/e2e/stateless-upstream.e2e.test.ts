import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResult,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  Progress,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { PrismaClient } from '@prisma/client';
import { PrismaPg } from '@prisma/adapter-pg';
import { Redis } from 'ioredis';
import { QueueName } from '@tollgate/queue';
import { callMeta, connectAgent, textOf, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConformanceServer, startConformanceServer } from '../fixtures/conformance-server';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

const REVISION = '2026-07-28';
const META = 'io.modelcontextprotocol/';
const PER_CALL = 25;
const SUBSCRIPTION_PRICE = 500;

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
  let orgId: string;
  let upstreamId: string;
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
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Stateless up', slug: 'stateless-up' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 's@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
      allow: ['next:*'],
      deny: [],
      resourceAllow: ['next:*'],
      promptAllow: ['next:*'],
    });
    upstreamId = (
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
    // Resource subscriptions have their own price (the listen stream's test reads it). Set before
    // the edge's first call: a price added later reaches a running edge through an invalidation
    // it applies in its own time, which the agent's next call may precede.
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId,
          toolPattern: 'subscription:test://*',
          perCallMicros: SUBSCRIPTION_PRICE,
        })
      ).status,
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

  it('should keep on the upstream that it speaks 2026-07-28', async () => {
    const row = await db.upstreamServer.findFirstOrThrow({ where: { namespace: 'next' } });
    expect(row.protocolRevision).toBe(REVISION);
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

  it("should read its resources and get its prompts; a prompt that asks for input asks a 2025-11-25 agent's client, and goes through rounds with a 2026-07-28 agent", async () => {
    const agent = await capableAgent();
    const read = await agent.readResource({ uri: 'test://static-text' });
    expect(read.contents[0]).toMatchObject({ uri: 'test://static-text', text: expect.any(String) });
    expect(read).not.toHaveProperty('ttlMs');
    const simple = await agent.getPrompt({ name: 'next__test_simple_prompt' });
    expect(simple.messages.length).toBeGreaterThan(0);
    // A 2025-11-25 session's client is asked what the prompt's upstream needs, on the request's stream.
    const asked = await agent.getPrompt({ name: 'next__test_input_required_result_prompt' });
    expect(JSON.stringify(asked.messages)).toContain('Answer with this context in mind: Ada');

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
    // The upstream is told what the session declared at initialize (nothing): it refuses a tool that needs sampling.
    const refused = (await agent.callTool({ name: 'next__test_missing_capability', arguments: {} })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('sampling');
  });

  it("should relay sampling, elicitation and roots between the upstream's rounds and a 2025-11-25 agent's client", async () => {
    const agent = await capableAgent();
    const sampled = (await agent.callTool({
      name: 'next__test_sampling',
      arguments: { prompt: 'Capital of France?' },
    })) as CallToolResult;
    expect(textOf(sampled)).toBe('LLM response: Paris');
    const elicited = (await agent.callTool({
      name: 'next__test_elicitation',
      arguments: { message: 'Who are you?' },
    })) as CallToolResult;
    expect(textOf(elicited)).toContain('action=accept');
    const roots = (await agent.callTool({ name: 'next__test_list_roots', arguments: {} })) as CallToolResult;
    expect(textOf(roots)).toBe('Roots: file:///work/project');
    // The session declared sampling: the upstream is told so and runs the tool.
    const declared = (await agent.callTool({ name: 'next__test_missing_capability', arguments: {} })) as CallToolResult;
    expect(textOf(declared)).toBe('The client declared sampling');
  });

  it('should hand a 2026-07-28 agent the upstream input-required result and finish on its retry', async () => {
    const call = { name: 'next__test_input_required_result_elicitation', arguments: {} };
    const caps = { elicitation: {} };
    const first = await post('tools/call', call, caps);
    expect(first.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
    const [[inputKey, asked]] = Object.entries(first.result.inputRequests as Record<string, { method: string }>);
    // The upstream's own name for the input, not one of the edge's.
    expect(inputKey).toBe('user_name');
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

    // The upstream is told what this request declared (not what the edge could relay): a tool that
    // needs sampling is refused by the upstream itself, and the agent gets its -32021.
    const undeclared = await post('tools/call', { name: 'next__test_missing_capability', arguments: {} }, caps);
    expect(undeclared.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
    const declared = await post(
      'tools/call',
      { name: 'next__test_missing_capability', arguments: {} },
      { ...caps, sampling: {} },
    );
    expect(declared.result).toMatchObject({ content: [{ type: 'text', text: 'The client declared sampling' }] });

    const plain = await post('tools/call', { name: 'next__test_simple_text', arguments: {} });
    expect(plain.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text' }] });
  });

  it("should relay a 2026-07-28 upstream's resource updates to a 2025-11-25 session that subscribed", async () => {
    const agent = await connectAgent(p.edgeUrl, key);
    agents.push(agent);
    const updated = new Promise<string>((resolve) =>
      agent.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)),
    );
    // The revision has no resources/subscribe: the edge's listen stream to the upstream asks for it.
    await agent.subscribeResource({ uri: 'test://watched-resource' });
    const trigger = await post('tools/call', { name: 'next__test_trigger_resource_update', arguments: {} });
    expect(trigger.result).toMatchObject({ content: [{ text: 'Resource update announced' }] });
    expect(await updated).toBe('test://watched-resource');
    await agent.unsubscribeResource({ uri: 'test://watched-resource' });
  });

  /** A 2026-07-28 agent's `subscriptions/listen` stream, read message by message. */
  async function openListen(notifications: Record<string, unknown>) {
    const id = nextId++;
    const response = await fetch(`${p.edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': REVISION,
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'subscriptions/listen',
        params: { notifications, _meta: { [`${META}protocolVersion`]: REVISION, [`${META}clientCapabilities`]: {} } },
      }),
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    const messages: Record<string, any>[] = [];
    return {
      id,
      /** The first message of `method` not yet taken (waits for it). */
      async next(method: string): Promise<Record<string, any>> {
        for (;;) {
          const at = messages.findIndex((m) => m.method === method);
          if (at >= 0) return messages.splice(at, 1)[0];
          const { value, done } = await reader.read();
          if (done) throw new Error(`the listen stream ended before ${method}: ${JSON.stringify(messages)}`);
          buffered += value;
          const events = buffered.split('\n\n');
          buffered = events.pop()!;
          for (const e of events)
            for (const line of e.split('\n')) if (line.startsWith('data: ')) messages.push(JSON.parse(line.slice(6)));
        }
      },
      close: () => reader.cancel(),
    };
  }

  it("should tell a 2026-07-28 agent's listen stream when the upstream announces a tool list change on its own", async () => {
    // The edge already holds a connection to the upstream (earlier calls), and with it the upstream's listen stream.
    const listen = await openListen({ toolsListChanged: true });
    const ack = await listen.next('notifications/subscriptions/acknowledged');
    expect(ack.params.notifications).toEqual({ toolsListChanged: true });
    const trigger = await post('tools/call', { name: 'next__test_trigger_tool_change', arguments: {} });
    expect(trigger.result).toMatchObject({ content: [{ text: 'Tool list change announced' }] });
    await listen.next('notifications/tools/list_changed');
    await listen.close();
  });

  it("should govern the resources a 2026-07-28 agent's listen stream subscribes to: charged once each, the refused one named, updates relayed, released on close", async () => {
    const listen = await openListen({ resourceSubscriptions: ['test://watched-resource', 'test://no-such-resource'] });
    const ack = await listen.next('notifications/subscriptions/acknowledged');
    // Only what the edge honors is acknowledged; the rest is named with the reason.
    expect(ack.params.notifications).toEqual({ resourceSubscriptions: ['test://watched-resource'] });
    expect(ack.params._meta[`${META}subscriptionId`]).toBe(String(listen.id));
    expect(ack.params._meta['tollgate/refused']).toEqual([
      expect.objectContaining({ uri: 'test://no-such-resource', message: expect.stringContaining('no-such-resource') }),
    ]);
    const [charged] = ack.params._meta['tollgate/calls'];
    expect(charged).toMatchObject({ uri: 'test://watched-resource', costMicros: SUBSCRIPTION_PRICE });
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [charged.callId]);
    expect(await db.usageEvent.findFirstOrThrow({ where: { id: charged.callId } })).toMatchObject({
      toolName: 'subscription:test://watched-resource',
      costMicros: BigInt(SUBSCRIPTION_PRICE),
      outcome: 'OK',
    });

    // The upstream's update reaches the stream, under the stream's subscription id.
    const trigger = await post('tools/call', { name: 'next__test_trigger_resource_update', arguments: {} });
    expect(trigger.result).toMatchObject({ content: [{ text: 'Resource update announced' }] });
    const updated = await listen.next('notifications/resources/updated');
    expect(updated.params).toEqual({
      uri: 'test://watched-resource',
      _meta: { [`${META}subscriptionId`]: String(listen.id) },
    });

    // Closing the stream releases its subscription: no subscriber of the resource is left.
    await listen.close();
    const redis = new Redis(p.env.redisUrl);
    try {
      const subscribers = async () => {
        const keys = await redis.keys(`${p.env.redisPrefix}*res-subs*`);
        return keys.length === 0 ? 0 : Number(await redis.scard(keys[0]));
      };
      await expect.poll(subscribers).toBe(0);
    } finally {
      redis.disconnect();
    }
  });

  it('should refuse a listen stream whose resourceSubscriptions is not a list of URIs, naming the field', async () => {
    const answer = await post('subscriptions/listen', {
      notifications: { resourceSubscriptions: 'test://watched-resource' },
    });
    expect(answer.error).toMatchObject({ code: -32602, message: expect.stringContaining('resourceSubscriptions') });
  });
});

/**
 * Which revision the edge speaks to each upstream: the newest it offers. An upstream that serves
 * both, with tools and a prompt only on its 2026-07-28 path (as published servers do), is catalogued
 * and called on that path; one that speaks only 2025-11-25 keeps its session.
 */
describe('the revision the edge speaks to each upstream', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let both: ConformanceServer;
  let legacy: FixtureServer;
  let legacyProbes = 0;
  let orgId: string;
  let key: string;
  let agent: Client;

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    both = await startConformanceServer({ pathsDiffer: true });
    // Counts the requests of the newer revision it gets (the probe: server/discover).
    legacy = await startFixtureServer(undefined, {
      intercept: (req) => {
        if (req.headers['mcp-protocol-version'] === REVISION) legacyProbes++;
        return false;
      },
    });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Revisions', slug: 'revisions' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'r@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
      allow: ['both:*', 'legacy:*'],
      deny: [],
      promptAllow: ['both:*'],
    });
    const jobs: string[] = [];
    for (const [namespace, url] of [
      ['both', both.url],
      ['legacy', legacy.url],
    ]) {
      const id = (
        await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, { namespace, transport: 'STREAMABLE_HTTP', url })
      ).body.id;
      jobs.push((await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${id}/sync`)).body.jobId);
    }
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, jobs);
    key = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'revisions', disclosureMode: 'FULL' })
    ).body.secret;
    agent = await connectAgent(p.edgeUrl, key);
  }, 60_000);

  afterAll(async () => {
    await agent?.close();
    await p?.close();
    await both?.close();
    await legacy?.close();
    await db?.$disconnect();
  });

  it('should keep on each upstream the newest revision it offers', async () => {
    const rows = await db.upstreamServer.findMany({ select: { id: true, namespace: true, protocolRevision: true } });
    expect(Object.fromEntries(rows.map((r) => [r.namespace, r.protocolRevision]))).toEqual({
      both: REVISION,
      legacy: '2025-11-25',
    });
    // An admin sees it on the upstream.
    const bothRow = rows.find((r) => r.namespace === 'both')!;
    expect((await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${bothRow.id}`)).body).toMatchObject({
      namespace: 'both',
      protocolRevision: REVISION,
    });
  });

  it('should catalog an upstream whose two revisions differ from its 2026-07-28 path, and call it there', async () => {
    const probesBySyncs = legacyProbes;
    const tools = (await agent.listTools()).tools.map((t) => t.name);
    // Listed only on the 2026-07-28 path of the upstream.
    expect(tools).toEqual(
      expect.arrayContaining([
        'both__test_simple_text',
        'both__test_input_required_result_elicitation',
        'legacy__ping',
      ]),
    );
    const prompts = (await agent.listPrompts()).prompts.map((x) => x.name);
    expect(prompts).toContain('both__test_input_required_result_prompt');
    const header = (await agent.callTool({
      name: 'both__test_header_param',
      arguments: { region: 'eu-west' },
    })) as CallToolResult;
    expect(textOf(header)).toBe('Region: eu-west');
    const pong = (await agent.callTool({ name: 'legacy__ping', arguments: {} })) as CallToolResult;
    expect(pong.isError).toBeFalsy();
    // The syncs asked the 2025-11-25 upstream; the edge took what they found and did not ask again.
    expect(probesBySyncs).toBeGreaterThan(0);
    expect(legacyProbes).toBe(probesBySyncs);
  });

  it('should serve a 2.x SDK client that negotiates 2026-07-28, its elicitation answered across the upstream rounds', async () => {
    const modern = new ModernClient(
      { name: 'modern-agent', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
    );
    modern.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Lin' } }));
    await modern.connect(
      new ModernTransport(new URL(`${p.edgeUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    try {
      expect(modern.getNegotiatedProtocolVersion()).toBe(REVISION);
      const names = (await modern.listTools()).tools.map((t) => t.name);
      expect(names).toContain('both__test_input_required_result_elicitation');
      const hello = await modern.callTool({ name: 'both__test_input_required_result_elicitation', arguments: {} });
      expect(hello.content).toEqual([{ type: 'text', text: 'Hello, Lin!' }]);
    } finally {
      await modern.close();
    }
  });

  it('should initialize a 2025-11-25 upstream that leaves server/discover unanswered', async () => {
    // It never answers a request of the newer revision (the probe times out, after the upstream's
    // call timeout: 1 s here), but takes initialize.
    const silent = await startFixtureServer(undefined, {
      intercept: (req) => req.headers['mcp-protocol-version'] === REVISION,
    });
    try {
      const id = (
        await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
          namespace: 'silent',
          transport: 'STREAMABLE_HTTP',
          url: silent.url,
          callTimeoutMs: 1_000,
        })
      ).body.id;
      const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${id}/sync`);
      await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
      const row = await db.upstreamServer.findUniqueOrThrow({ where: { id } });
      expect([row.lastSyncError, row.protocolRevision]).toEqual([null, '2025-11-25']);
      expect(await db.tool.count({ where: { upstreamId: id, removedAt: null } })).toBeGreaterThan(0);
    } finally {
      await silent.close();
    }
  }, 60_000);
});
