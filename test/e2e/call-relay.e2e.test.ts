import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotification,
  LoggingMessageNotificationSchema,
  Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { INestApplication } from '@nestjs/common';
import { loadEdgeConfig } from '@tollgate/config';
import { QueueName } from '@tollgate/queue';
import { SERVER_EVERYTHING, connectAgent, textOf, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdgeApp } from '../../apps/mcp-edge/src/edge-app';
import { FixtureServer, PROTOCOL_FIXTURE_TOOLS, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

/**
 * What an upstream sends during a call reaches the agent through the edge: progress, log messages
 * at the agent's level, and sampling and elicitation requests its client answers. Upstream: the
 * reference server-everything over stdio.
 */
describe('relay during a call (server-everything over stdio)', () => {
  let p: RunningPlatform;
  let key: string;
  let http: FixtureServer;
  const agents: Client[] = [];
  const asked: { method: string; params: unknown }[] = [];

  /** An agent whose client answers sampling and elicitation, as a chat app with a model and a user would. */
  async function capableAgent(
    elicitation: { form?: Record<string, never>; url?: Record<string, never> } = { form: {} },
    fetchVia?: typeof fetch,
  ): Promise<{ agent: Client; logs: LoggingMessageNotification['params'][] }> {
    const agent = new Client(
      { name: 'capable-agent', version: '1.0.0' },
      { capabilities: { sampling: {}, elicitation, roots: {} } },
    );
    agent.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [{ uri: 'file:///work/project', name: 'project' }],
    }));
    agent.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      asked.push({ method: req.method, params: req.params });
      return {
        model: 'agent-model',
        role: 'assistant',
        content: { type: 'text', text: 'The capital of France is Paris.' },
      };
    });
    agent.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push({ method: req.method, params: req.params });
      if (req.params.mode === 'url') return { action: 'accept' };
      return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
    });
    const logs: LoggingMessageNotification['params'][] = [];
    agent.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => void logs.push(n.params));
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(`${p.edgeUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
        ...(fetchVia ? { fetch: fetchVia } : {}),
      }),
    );
    agents.push(agent);
    return { agent, logs };
  }

  beforeAll(async () => {
    p = await startPlatform();
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Relay', slug: 'relay' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'r@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['everything:*', 'proto:*'], deny: [] });
    // Answer streams (not JSON bodies), so the upstream's requests and notifications ride the call's own stream.
    http = await startFixtureServer(PROTOCOL_FIXTURE_TOOLS, { enableJsonResponse: false, sessions: true });
    for (const upstream of [
      { namespace: 'everything', transport: 'STDIO', ...SERVER_EVERYTHING, callTimeoutMs: 30_000 },
      { namespace: 'proto', transport: 'STREAMABLE_HTTP', url: http.url },
    ]) {
      const id = (await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, upstream)).body.id;
      const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${id}/sync`);
      await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    }
    key = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'relay', disclosureMode: 'FULL' }))
      .body.secret;
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(agents.map((a) => a.close()));
    await http?.close();
    await p?.close();
  });

  it('should show the agent the upstream progress of a long-running operation under its own token', async () => {
    const agent = await connectAgent(p.edgeUrl, key);
    agents.push(agent);
    const progress: Progress[] = [];
    const result = await agent.callTool(
      { name: 'everything__trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
      undefined,
      { onprogress: (p) => progress.push(p) },
    );
    expect(textOf(result as never)).toContain('Long running operation completed');
    // The last step's progress races the result (the SDK handles a notification a tick after a response).
    expect(progress.map((p) => [p.progress, p.total]).slice(0, 2)).toEqual([
      [1, 3],
      [2, 3],
    ]);
  });

  it('should let the agent client answer the upstream sampling request', async () => {
    const { agent } = await capableAgent();
    const result = await agent.callTool({
      name: 'everything__trigger-sampling-request',
      arguments: { prompt: 'What is the capital of France?', maxTokens: 20 },
    });
    expect(result.isError).toBeFalsy();
    expect(textOf(result as never)).toContain('The capital of France is Paris.');
    expect(asked.find((a) => a.method === 'sampling/createMessage')?.params).toMatchObject({
      maxTokens: 20,
      messages: [{ role: 'user', content: { text: expect.stringContaining('What is the capital of France?') } }],
    });
  });

  it('should let the agent client answer the upstream elicitation request', async () => {
    const { agent } = await capableAgent();
    const result = await agent.callTool({ name: 'everything__trigger-elicitation-request', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(textOf(result as never)).toContain('Ada Lovelace');
    expect(asked.find((a) => a.method === 'elicitation/create')?.params).toMatchObject({
      message: expect.any(String),
      requestedSchema: { type: 'object' },
    });
  });

  it('should give the upstream a clear error when the agent client did not declare sampling', async () => {
    const agent = await connectAgent(p.edgeUrl, key);
    agents.push(agent);
    const result = await agent.callTool({
      name: 'everything__trigger-sampling-request',
      arguments: { prompt: 'hi', maxTokens: 5 },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result as never)).toContain("the agent's client did not declare the sampling capability");
  });

  it('should relay upstream log messages during a call at or above the level the agent set', async () => {
    const verbose = await capableAgent();
    await verbose.agent.setLoggingLevel('debug');
    const quiet = await capableAgent();
    await quiet.agent.setLoggingLevel('emergency');
    await verbose.agent.callTool({ name: 'everything__toggle-simulated-logging', arguments: {} });
    try {
      // The simulated logging fires every 5 s: two 5.5 s calls at once each overlap at least one
      // message; the agent that asked for debug hears it, the one that asked for emergency does not.
      const longCall = { name: 'everything__trigger-long-running-operation', arguments: { duration: 5.5, steps: 1 } };
      await Promise.all([verbose.agent.callTool(longCall), quiet.agent.callTool(longCall)]);
      expect(verbose.logs.length).toBeGreaterThanOrEqual(1);
      expect(verbose.logs[0]).toMatchObject({ level: expect.any(String), data: expect.stringContaining('message') });
      expect(quiet.logs.filter((l) => l.level !== 'emergency')).toEqual([]);
    } finally {
      await verbose.agent.callTool({ name: 'everything__toggle-simulated-logging', arguments: {} });
    }
  }, 30_000);

  it('should relay a Streamable HTTP upstream roots request and log message from the call answer stream', async () => {
    const { agent, logs } = await capableAgent();
    const roots = await agent.callTool({ name: 'proto__ask-client', arguments: {} });
    expect(textOf(roots as never)).toBe('the client listed roots');
    await agent.callTool({ name: 'proto__log-then-answer', arguments: {} });
    expect(logs).toContainEqual(expect.objectContaining({ level: 'info', data: 'working on it' }));

    // A client that declared no roots: the upstream hears why.
    const plain = await connectAgent(p.edgeUrl, key);
    agents.push(plain);
    expect(textOf((await plain.callTool({ name: 'proto__ask-client', arguments: {} })) as never)).toBe(
      'the client refused roots/list: -32601',
    );
  });

  it('should relay a URL-mode elicitation only to a client that declared URL mode', async () => {
    const { agent } = await capableAgent({ form: {}, url: {} });
    const url = 'https://example.test/connect';
    const result = await agent.callTool({
      name: 'everything__trigger-url-elicitation',
      arguments: { url, message: 'Open this' },
    });
    expect(result.isError).toBeFalsy();
    expect(
      asked.find((a) => a.method === 'elicitation/create' && (a.params as { mode?: string }).mode === 'url')?.params,
    ).toMatchObject({ mode: 'url', url, message: 'Open this' });

    const formOnly = await capableAgent({ form: {} });
    const refused = await formOnly.agent.callTool({
      name: 'everything__trigger-url-elicitation',
      arguments: { url, message: 'Open this' },
    });
    expect(textOf(refused as never)).toContain('did not declare the elicitation (URL mode) capability');
  });

  it('should take the agent client answer on another edge to the call that waits for it', async () => {
    const second: INestApplication = await createEdgeApp(loadEdgeConfig(p.env.vars));
    await second.listen(0, '127.0.0.1');
    const secondUrl = (await second.getUrl()).replace('[::1]', '127.0.0.1');
    let answersOnSecondEdge = 0;
    // The client's POSTs of answers (JSON-RPC responses) go to the second edge, as a load balancer might send them.
    const viaSecondEdge: typeof fetch = (url, init) => {
      const body =
        typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string; result?: unknown }) : undefined;
      if (body && body.method === undefined && body.result !== undefined) {
        answersOnSecondEdge++;
        return fetch(`${secondUrl}/mcp`, init);
      }
      return fetch(url, init);
    };
    try {
      const { agent } = await capableAgent({ form: {} }, viaSecondEdge);
      const result = await agent.callTool({
        name: 'everything__trigger-sampling-request',
        arguments: { prompt: 'Across edges?', maxTokens: 10 },
      });
      expect(textOf(result as never)).toContain('The capital of France is Paris.');
      expect(answersOnSecondEdge).toBe(1);
    } finally {
      await second.close();
    }
  });
});
