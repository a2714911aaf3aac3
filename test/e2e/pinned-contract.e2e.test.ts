import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { QueueName } from '@tollgate/queue';
import { connectAgent, textOf, toolError, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, FixtureTool, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

const lookup = (properties: Record<string, object>): FixtureTool => ({
  definition: {
    name: 'lookup',
    description: 'Looks up a word.',
    inputSchema: { type: 'object', properties, required: ['word'] },
  },
  run: (args) => ({ content: [{ type: 'text', text: `looked up ${JSON.stringify(args)}` }] }),
});

describe('the pinned definition is the contract', () => {
  let p: RunningPlatform;
  let fixture: FixtureServer;
  let agent: Client;
  let orgId: string;
  let upstreamId: string;
  const tools: FixtureTool[] = [lookup({ word: { type: 'string', minLength: 1 } })];
  const sync = async () => {
    const res = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [res.body.jobId]);
  };
  const upstreamCalls = () => fixture.calls.filter((c) => c.tool === 'lookup').length;

  beforeAll(async () => {
    p = await startPlatform();
    fixture = await startFixtureServer(tools);
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Strict', slug: 'strict', autoApproveTools: false })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 's@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['dict:*'], deny: [] });
    upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'dict',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
      })
    ).body.id;
    await sync();
    for (const t of (await p.admin('GET', `/v1/orgs/${orgId}/tools?reviewStatus=PENDING`)).body) {
      await p.admin('POST', `/v1/orgs/${orgId}/tools/${t.id}/approve`, { definitionHash: t.definitionHash });
    }
    const key = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'k', disclosureMode: 'FULL' }))
      .body.secret;
    agent = await connectAgent(p.edgeUrl, key);
  }, 60_000);

  afterAll(async () => {
    await agent?.close();
    await fixture?.close();
    await p?.close();
  });

  it('should refuse a parameter only a pending revision has, naming it, without calling the upstream', async () => {
    await expect.poll(async () => (await agent.listTools()).tools.map((t) => t.name)).toContain('dict__lookup');
    tools[0] = lookup({ word: { type: 'string', minLength: 1 }, lang: { type: 'string' } });
    await sync();
    const before = upstreamCalls();
    const refused = await agent.callTool({ name: 'dict__lookup', arguments: { word: 'tollgate', lang: 'fr' } });
    expect(refused.isError).toBe(true);
    expect(toolError(refused as never)).toMatchObject({ code: 'INVALID_ARGUMENTS', parameter: 'lang', charged: false });
    expect(toolError(refused as never)?.message).toContain('"lang"');
    expect(upstreamCalls()).toBe(before);

    // The approved parameters still work, and once the revision is approved `lang` does too.
    expect(
      textOf((await agent.callTool({ name: 'dict__lookup', arguments: { word: 'tollgate' } })) as never),
    ).toContain('tollgate');
    const [held] = (await p.admin('GET', `/v1/orgs/${orgId}/tools?reviewStatus=PENDING`)).body;
    await p.admin('POST', `/v1/orgs/${orgId}/tools/${held.id}/approve`, { definitionHash: held.definitionHash });
    await expect
      .poll(
        async () =>
          (await agent.callTool({ name: 'dict__lookup', arguments: { word: 'tollgate', lang: 'fr' } })).isError ??
          false,
      )
      .toBe(false);
  });

  it('should refuse arguments that break the pinned schema, naming the parameter', async () => {
    const before = upstreamCalls();
    const missing = await agent.callTool({ name: 'dict__lookup', arguments: {} });
    expect(toolError(missing as never)).toMatchObject({
      code: 'INVALID_ARGUMENTS',
      parameter: 'word',
      problem: 'is required',
    });
    const wrongType = await agent.callTool({ name: 'dict__lookup', arguments: { word: 42 } });
    expect(toolError(wrongType as never)).toMatchObject({ code: 'INVALID_ARGUMENTS', parameter: 'word' });
    expect(upstreamCalls()).toBe(before);
  });
});
