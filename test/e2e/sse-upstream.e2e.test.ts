import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QueueName } from '@tollgate/queue';
import { callMeta, connectAgent, textOf, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSseFixtureServer } from '../fixtures/sse-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

describe('an upstream on the legacy HTTP+SSE transport', () => {
  let p: RunningPlatform;
  let sse: Awaited<ReturnType<typeof startSseFixtureServer>>;

  beforeAll(async () => {
    p = await startPlatform();
    sse = await startSseFixtureServer();
  });

  afterAll(async () => {
    await sse?.close();
    await p?.close();
  });

  it('should sync its tools and serve governed calls through the edge', async () => {
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Legacy', slug: 'legacy' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'l@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const upstream = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'legacy',
      transport: 'SSE',
      url: sse.url,
    });
    expect(upstream.status).toBe(201);
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstream.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    const tools = await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${upstream.body.id}/tools`);
    expect(tools.body.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['ping', 'slow', 'huge']));
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['legacy:*'], deny: [] });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId: upstream.body.id,
      toolPattern: 'ping',
      perCallMicros: 3_000,
    });
    const agent = await connectAgent(
      p.edgeUrl,
      (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'k' })).body.secret,
    );
    try {
      const res = (await agent.callTool({ name: 'legacy__ping', arguments: {} })) as CallToolResult;
      expect(textOf(res)).toBe('pong');
      expect(callMeta(res)?.costMicros).toBe(3_000);
    } finally {
      await agent.close();
    }
  });
});
