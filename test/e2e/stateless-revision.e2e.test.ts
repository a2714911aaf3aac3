import { QueueName } from '@tollgate/queue';
import { SERVER_EVERYTHING, TEST_REDIS_MODES, connectAgent, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEdgeConfig } from '@tollgate/config';
import { createEdgeApp } from '../../apps/mcp-edge/src/edge-app';
import { RunningPlatform, startPlatform } from '../support/platform';

const REVISION = '2026-07-28';
const META = 'io.modelcontextprotocol/';

/** MCP 2026-07-28 through the edge, as raw HTTP (the SDK 1.x client does not speak it). */
// On both Redis topologies: a requestState signed by one edge is checked by any other, cluster too.
describe.each(TEST_REDIS_MODES)('the stateless revision 2026-07-28 at the edge, on %s Redis', (mode) => {
  let p: RunningPlatform;
  let key: string;
  let orgId: string;
  let nextId = 1;

  const post = (
    method: string,
    params: Record<string, unknown> = {},
    opts: { headers?: Record<string, string>; meta?: Record<string, unknown>; edgeUrl?: string } = {},
  ) =>
    fetch(`${opts.edgeUrl ?? p.edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': REVISION,
        'mcp-method': method,
        ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
        ...opts.headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: nextId++,
        method,
        params: {
          ...params,
          _meta: { [`${META}protocolVersion`]: REVISION, [`${META}clientCapabilities`]: {}, ...opts.meta },
        },
      }),
    });
  /** The JSON-RPC messages of an answer, JSON body or event stream alike. */
  const messagesOf = async (res: Response): Promise<Record<string, any>[]> => {
    const text = await res.text();
    if (!res.headers.get('content-type')?.includes('text/event-stream')) return [JSON.parse(text)];
    return text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
  };

  beforeAll(async () => {
    p = await startPlatform({}, { redis: mode });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Next', slug: 'next' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'n@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['everything:*'], deny: [] });
    const upstream = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'everything',
      transport: 'STDIO',
      ...SERVER_EVERYTHING,
    });
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstream.body.id}/sync`);
    await waitForJobs(p.env.redis, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    key = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'next', disclosureMode: 'FULL' }))
      .body.secret;
  }, 60_000);

  afterAll(async () => {
    await p?.close();
  });

  it('should answer server/discover without a session, with both revisions and caching hints', async () => {
    const res = await post('server/discover');
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const [answer] = await messagesOf(res);
    expect(answer.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: expect.arrayContaining([REVISION, '2025-11-25']),
      capabilities: { tools: { listChanged: true }, logging: {} },
      ttlMs: expect.any(Number),
      cacheScope: 'private',
      _meta: { [`${META}serverInfo`]: { name: 'tollgate-edge' } },
    });
  });

  it('should list the key tools in name order with caching hints', async () => {
    const [answer] = await messagesOf(await post('tools/list'));
    const names = answer.result.tools.map((t: { name: string }) => t.name);
    expect(names).toContain('everything__echo');
    expect(names).toEqual([...names].sort());
    expect(answer.result).toMatchObject({ resultType: 'complete', ttlMs: expect.any(Number), cacheScope: 'private' });
  });

  it('should refuse a request whose routing headers do not match its body', async () => {
    const wrongMethod = await post('tools/list', {}, { headers: { 'mcp-method': 'prompts/list' } });
    expect(wrongMethod.status).toBe(400);
    expect(((await wrongMethod.json()) as { error: { code: number } }).error.code).toBe(-32020);
    const wrongName = await post(
      'tools/call',
      { name: 'everything__echo', arguments: { message: 'x' } },
      { headers: { 'mcp-name': 'everything__other' } },
    );
    expect(wrongName.status).toBe(400);
    const noMeta = await fetch(`${p.edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': REVISION,
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list', params: {} }),
    });
    expect(noMeta.status).toBe(400);
    expect(((await noMeta.json()) as { error: { code: number } }).error.code).toBe(-32602);
    const removed = await post('initialize', {
      protocolVersion: REVISION,
      capabilities: {},
      clientInfo: { name: 'x', version: '1' },
    });
    expect(removed.status).toBe(404);
  });

  it('should govern a tool call and stream its progress on the answer stream', async () => {
    const res = await post(
      'tools/call',
      { name: 'everything__trigger-long-running-operation', arguments: { duration: 0.4, steps: 2 } },
      { meta: { progressToken: 'p-1' } },
    );
    const messages = await messagesOf(res);
    // An answer without a stream says why (a refusal or upstream failure shows its body).
    expect(res.headers.get('content-type'), JSON.stringify(messages)).toContain('text/event-stream');
    const progress = messages.filter((m) => m.method === 'notifications/progress');
    expect(progress[0].params).toMatchObject({ progressToken: 'p-1', progress: 1, total: 2 });
    const answer = messages.at(-1)!;
    expect(answer.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: expect.stringContaining('completed') }],
      _meta: { 'tollgate/call': { tool: 'everything__trigger-long-running-operation' } },
    });
  });

  it('should hear of a policy change on subscriptions/listen, and serve 2025-11-25 agents beside it', async () => {
    const listen = await post('subscriptions/listen', { notifications: { toolsListChanged: true } });
    const reader = listen.body!.getReader();
    const events: string[] = [];
    const next = async (match: string) => {
      while (!events.join('').includes(match)) {
        const { value, done } = await reader.read();
        if (done) throw new Error('listen stream ended');
        events.push(new TextDecoder().decode(value));
      }
    };
    await next('notifications/subscriptions/acknowledged');
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
      allow: ['everything:*'],
      deny: ['everything:echo'],
    });
    await next('notifications/tools/list_changed');
    expect(events.join('')).toContain(`"${META}subscriptionId"`);
    await reader.cancel();

    const legacy = await connectAgent(p.edgeUrl, key);
    expect((await legacy.listTools()).tools.map((t) => t.name)).not.toContain('everything__echo');
    await legacy.close();
  });

  it('should turn an upstream elicitation mid-call into an input-required result and finish the call on the retry', async () => {
    const elicitation = { [`${META}clientCapabilities`]: { elicitation: {} } };
    const call = { name: 'everything__trigger-elicitation-request', arguments: {} };
    const [first] = await messagesOf(await post('tools/call', call, { meta: elicitation }));
    expect(first.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
    const [[key, asked]] = Object.entries(
      first.result.inputRequests as Record<string, { method: string; params: { requestedSchema: object } }>,
    );
    expect(asked).toMatchObject({ method: 'elicitation/create', params: { requestedSchema: { type: 'object' } } });

    const tampered = await post(
      'tools/call',
      { ...call, inputResponses: {}, requestState: `${first.result.requestState}x` },
      { meta: elicitation },
    );
    expect(((await tampered.json()) as { error: { code: number } }).error.code).toBe(-32602);

    const answer = { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
    const [done] = await messagesOf(
      await post(
        'tools/call',
        { ...call, inputResponses: { [key]: answer }, requestState: first.result.requestState },
        { meta: elicitation },
      ),
    );
    expect(done.result).toMatchObject({
      resultType: 'complete',
      _meta: { 'tollgate/call': { tool: 'everything__trigger-elicitation-request' } },
    });
    expect(JSON.stringify(done.result.content)).toContain('Ada Lovelace');
  });

  it('should accept on another edge a requestState this edge signed (one deployment key) and send the retry back to the edge that holds the call', async () => {
    // A second edge of the same deployment, as a load balancer would put beside the first.
    const other = await createEdgeApp(loadEdgeConfig(p.env.vars));
    await other.listen(0, '127.0.0.1');
    const otherUrl = (await other.getUrl()).replace('[::1]', '127.0.0.1');
    try {
      const elicitation = { [`${META}clientCapabilities`]: { elicitation: {} } };
      const call = { name: 'everything__trigger-elicitation-request', arguments: {} };
      const [first] = await messagesOf(await post('tools/call', call, { meta: elicitation }));
      expect(first.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
      const [inputKey] = Object.keys(first.result.inputRequests as Record<string, unknown>);
      const answer = { action: 'accept', content: { name: 'Grace Hopper', check: true } };
      const retry = { ...call, inputResponses: { [inputKey]: answer }, requestState: first.result.requestState };

      // The other edge checks the state with the same key: genuine, but the call waits elsewhere.
      const [elsewhere] = await messagesOf(await post('tools/call', retry, { meta: elicitation, edgeUrl: otherUrl }));
      expect(elsewhere.error.code).toBe(-32602);
      expect(elsewhere.error.message).toContain('waits on another edge');
      expect(elsewhere.error.message).not.toContain('integrity');

      const [done] = await messagesOf(await post('tools/call', retry, { meta: elicitation }));
      expect(done.result).toMatchObject({ resultType: 'complete' });
      expect(JSON.stringify(done.result.content)).toContain('Grace Hopper');
    } finally {
      await other.close();
    }
  });

  it('should answer -32021 naming the capability when the call failed for one the client did not declare', async () => {
    const res = await post('tools/call', {
      name: 'everything__trigger-sampling-request',
      arguments: { prompt: 'hi', maxTokens: 5 },
    });
    expect(res.status).toBe(400);
    const [answer] = await messagesOf(res);
    expect(answer.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
  });
});
