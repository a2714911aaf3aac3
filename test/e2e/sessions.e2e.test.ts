import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { INestApplication } from '@nestjs/common';
import { loadEdgeConfig } from '@tollgate/config';
import { QueueName } from '@tollgate/queue';
import { REPO_ROOT, connectAgent, textOf, toolError, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdgeApp } from '../../apps/mcp-edge/src/edge-app';
import { FixtureServer, FixtureTool, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

const GITHUB = JSON.parse(
  readFileSync(path.join(REPO_ROOT, 'test/fixtures/catalogs/github-mcp-server.json'), 'utf8'),
) as { tools: Tool[] };

/** Resolves on the next `notifications/tools/list_changed` the client receives. */
function nextListChanged(client: Client): Promise<void> {
  return new Promise((resolve) =>
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => resolve()),
  );
}

describe('MCP sessions at the edge', () => {
  let p: RunningPlatform;
  let fixture: FixtureServer;
  let secondEdge: INestApplication;
  let secondEdgeUrl: string;
  let orgId: string;
  let upstreamId: string;
  let key: string;
  let otherKey: string;
  let keyId: string;

  beforeAll(async () => {
    p = await startPlatform();
    // A second edge replica on the same database and Redis: sessions must work across replicas.
    secondEdge = await createEdgeApp(loadEdgeConfig(p.env.vars));
    await secondEdge.listen(0, '127.0.0.1');
    secondEdgeUrl = (await secondEdge.getUrl()).replace('[::1]', '127.0.0.1');
    const tools: FixtureTool[] = GITHUB.tools.map((definition) => ({
      definition,
      run: () => ({ content: [{ type: 'text', text: `ran ${definition.name}` }] }),
    }));
    fixture = await startFixtureServer(tools);
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Sess', slug: 'sess' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 's@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'github',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['github:*'], deny: [] });
    const k = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
      teamId,
      userId,
      name: 'progressive',
      disclosureMode: 'PROGRESSIVE',
    });
    key = k.body.secret;
    keyId = k.body.key.id;
    otherKey = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'other' })).body.secret;
  });

  afterAll(async () => {
    await secondEdge?.close();
    await fixture?.close();
    await p?.close();
  });

  it('should add fetched tools to the session list and announce it on the session stream, across replicas', async () => {
    const agent = await connectAgent(p.edgeUrl, key);
    try {
      const sessionId = (agent.transport as { sessionId?: string }).sessionId!;
      expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(agent.getServerCapabilities()?.tools?.listChanged).toBe(true);
      const before = (await agent.listTools()).tools.map((t) => t.name);
      expect(before).not.toContain('github__create_issue');

      // The fetch goes to the OTHER replica with the same session id; the stream is held by the first.
      const changed = nextListChanged(agent);
      const res = await fetch(`${secondEdgeUrl}/mcp`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${key}`,
          'Mcp-Session-Id': sessionId,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Mcp-Protocol-Version': '2025-06-18',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'tollgate__get_tool_schemas', arguments: { names: ['github__create_issue'] } },
        }),
      });
      expect(res.status).toBe(200);
      await changed;
      const after = (await agent.listTools()).tools;
      expect(after.find((t) => t.name === 'github__create_issue')?._meta?.['tollgate/price']).toMatchObject({
        perCallMicros: 0,
      });
    } finally {
      await agent.close();
    }
  });

  it('should tell a connected session when a policy change of its org changes the tools it lists', async () => {
    const agent = await connectAgent(p.edgeUrl, key);
    const names = async () => (await agent.listTools()).tools.map((t) => t.name);
    try {
      // A tool the session fetched joins its list.
      const loaded = nextListChanged(agent);
      await agent.callTool({ name: 'tollgate__get_tool_schemas', arguments: { names: ['github__create_issue'] } });
      await loaded;
      expect(await names()).toContain('github__create_issue');
      // The key may no longer use it: the session hears its list changed, and no longer lists it.
      const changed = nextListChanged(agent);
      await p.admin('PUT', `/v1/orgs/${orgId}/policies/KEY/${keyId}`, {
        allow: ['github:*'],
        deny: ['github:create_issue'],
      });
      await changed;
      expect(await names()).not.toContain('github__create_issue');
    } finally {
      await agent.close();
      await p.admin('PUT', `/v1/orgs/${orgId}/policies/KEY/${keyId}`, { allow: ['github:*'], deny: [] });
    }
  });

  it('should hold a session to the policy schema budget per session', async () => {
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/KEY/${keyId}`, {
      allow: ['github:*'],
      deny: [],
      maxSessionSchemaTokens: 1_000,
    });
    const agent = await connectAgent(p.edgeUrl, key);
    try {
      const names = [
        'github__create_issue',
        'github__create_pull_request',
        'github__search_code',
        'github__list_commits',
        'github__get_file_contents',
        'github__create_branch',
      ];
      let refused: CallToolResult | undefined;
      for (const n of names) {
        const res = (await agent.callTool({
          name: 'tollgate__get_tool_schemas',
          arguments: { names: [n] },
        })) as CallToolResult;
        if (res.isError) {
          refused = res;
          break;
        }
      }
      expect(toolError(refused!)).toMatchObject({
        code: 'SESSION_SCHEMA_BUDGET_EXCEEDED',
        sessionSchemaTokenCeiling: 1_000,
      });
      expect(
        (toolError(refused!)!.loadedTokens as number) + (toolError(refused!)!.requestedTokens as number),
      ).toBeGreaterThan(1_000);
    } finally {
      await agent.close();
      await p.admin('PUT', `/v1/orgs/${orgId}/policies/KEY/${keyId}`, { allow: ['github:*'], deny: [] });
    }
  });

  it('should refuse a session id presented with another key, and forget a deleted session', async () => {
    const agent = await connectAgent(p.edgeUrl, key);
    const sessionId = (agent.transport as { sessionId?: string }).sessionId!;
    const post = (secret: string) =>
      fetch(`${p.edgeUrl}/mcp`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${secret}`,
          'Mcp-Session-Id': sessionId,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await post(otherKey)).status).toBe(404);
    expect((await post(key)).status).toBe(200);
    await agent.close();
    const del = await fetch(`${p.edgeUrl}/mcp`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${key}`, 'Mcp-Session-Id': sessionId },
    });
    expect(del.status).toBe(200);
    expect((await post(key)).status).toBe(404);
  });

  it('should keep serving clients that send no session id (stateless)', async () => {
    const res = await fetch(`${p.edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'tollgate__search_tools', arguments: { query: 'create issue' } },
      }),
    });
    expect(res.status).toBe(200);
    expect(textOf(((await res.json()) as { result: CallToolResult }).result)).toContain('github__create_issue');
  });
});
