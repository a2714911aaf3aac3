import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { QueueName } from '@tollgate/queue';
import { REPO_ROOT, callMeta, connectAgent, textOf, toolError, waitForJobs } from '@tollgate/testing';
import { countJsonTokens } from '@tollgate/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, FixtureTool, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

// GitHub's real MCP catalog (117 tools, ~28k tokens as a plain tools/list), served by a fixture upstream.
const GITHUB = JSON.parse(
  readFileSync(path.join(REPO_ROOT, 'test/fixtures/catalogs/github-mcp-server.json'), 'utf8'),
) as { tools: Tool[] };

describe('progressive disclosure through the edge', () => {
  let p: RunningPlatform;
  let fixture: FixtureServer;
  let agent: Client;
  let fullAgent: Client;

  beforeAll(async () => {
    p = await startPlatform();
    const tools: FixtureTool[] = GITHUB.tools.map((definition) => ({
      definition,
      run: () => ({ content: [{ type: 'text', text: `ran ${definition.name}` }] }),
    }));
    fixture = await startFixtureServer(tools, { pageSize: 50 });
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Big', slug: 'big' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'b@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'github',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['github:*'], deny: ['github:delete_*'] });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, { upstreamId, toolPattern: '*', perCallMicros: 2_000 });
    const key = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'auto' })).body.secret;
    const fullKey = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'full', disclosureMode: 'FULL' })
    ).body.secret;
    agent = await connectAgent(p.edgeUrl, key);
    fullAgent = await connectAgent(p.edgeUrl, fullKey);
  });

  afterAll(async () => {
    await agent?.close();
    await fullAgent?.close();
    await fixture?.close();
    await p?.close();
  });

  it('should sync every page of a 117-tool upstream', async () => {
    const { tools } = await fullAgent.listTools();
    expect(tools.filter((t) => t.name.startsWith('github__'))).toHaveLength(
      GITHUB.tools.filter((t) => !t.name.startsWith('delete_')).length,
    );
  });

  it('should open a large catalog with a small initial context of hot tools and meta-tools', async () => {
    const res = await agent.listTools();
    const names = res.tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'tollgate__search_tools',
        'tollgate__get_tool_schemas',
        'tollgate__call_tool',
        'tollgate__list_categories',
      ]),
    );
    const tokens = countJsonTokens({ tools: res.tools });
    expect(tokens).toBeLessThanOrEqual(1_500);
    const plain = countJsonTokens({ tools: (await fullAgent.listTools()).tools });
    expect(plain).toBeGreaterThan(20_000);
    expect((res._meta as any)['tollgate/disclosure']).toMatchObject({ mode: 'PROGRESSIVE' });
  });

  it('should find a tool by what the agent wants to do, within the answer budget, without denied tools', async () => {
    const res = await agent.callTool({
      name: 'tollgate__search_tools',
      arguments: { query: 'create a new issue', maxTokens: 800 },
    });
    expect(res.isError ?? false).toBe(false);
    const answer = JSON.parse(textOf(res as never));
    expect(answer.tokens).toBeLessThanOrEqual(800);
    const found = answer.tools.map((t: { name: string }) => t.name);
    expect(found.slice(0, 3)).toContain('github__create_issue');
    const deleting = await agent.callTool({
      name: 'tollgate__search_tools',
      arguments: { query: 'delete a file', limit: 50 },
    });
    expect(
      JSON.parse(textOf(deleting as never))
        .tools.map((t: { name: string }) => t.name)
        .filter((n: string) => n.startsWith('github__delete_')),
    ).toEqual([]);
  });

  it('should give full schemas by name and call the tool through the governed pipeline', async () => {
    const schemas = JSON.parse(
      textOf(
        (await agent.callTool({
          name: 'tollgate__get_tool_schemas',
          arguments: { names: ['github__create_issue'] },
        })) as never,
      ),
    );
    expect(schemas.tools[0].name).toBe('github__create_issue');
    expect(schemas.tools[0].inputSchema.properties).toHaveProperty('title');
    const called = await agent.callTool({
      name: 'tollgate__call_tool',
      arguments: { name: 'github__create_issue', arguments: { owner: 'o', repo: 'r', title: 't' } },
    });
    expect(textOf(called as never)).toBe('ran create_issue');
    expect(callMeta(called as never)?.costMicros).toBe(2_000);
    const denied = await agent.callTool({
      name: 'tollgate__call_tool',
      arguments: { name: 'github__delete_file', arguments: {} },
    });
    expect(toolError(denied as never)?.code).toBe('TOOL_NOT_ALLOWED');
  });

  it('should answer a malformed meta-tool call with a structured error', async () => {
    const res = await agent.callTool({
      name: 'tollgate__search_tools',
      arguments: { query: 'x', cursor: 'not-a-cursor' },
    });
    expect(toolError(res as never)?.code).toBe('INVALID_REQUEST');
  });
});
