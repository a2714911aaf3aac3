import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { decodeSearchCursor } from '@tollgate/disclosure';
import { QueueName } from '@tollgate/queue';
import { REPO_ROOT, SERVER_EVERYTHING, connectAgent, textOf, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, FixtureTool, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

const GITHUB = JSON.parse(
  readFileSync(path.join(REPO_ROOT, 'test/fixtures/catalogs/github-mcp-server.json'), 'utf8'),
) as { tools: Tool[] };
// What the narrow key may use: GitHub's tools except its three delete_* tools.
const NARROW_VISIBLE = GITHUB.tools.filter((t) => !t.name.startsWith('delete_')).length;
const QUERIES = ['create a new issue', 'get the contents of a file', 'echo a message back', 'add two numbers'];

interface SearchPage {
  tools: { name: string }[];
  cursor?: string;
}

async function search(agent: Client, query: string, cursor?: string): Promise<{ json: string; page: SearchPage }> {
  const res = (await agent.callTool({
    name: 'tollgate__search_tools',
    arguments: { query, maxTokens: 300, limit: 50, ...(cursor ? { cursor } : {}) },
  })) as CallToolResult;
  expect(res.isError ?? false).toBe(false);
  const json = textOf(res);
  return { json, page: JSON.parse(json) as SearchPage };
}

/** Every page of a search, exactly as the agent reads them (cursors included). */
async function searchAllPages(agent: Client, query: string): Promise<string[]> {
  const pages: string[] = [];
  let cursor: string | undefined;
  do {
    const { json, page } = await search(agent, query, cursor);
    pages.push(json);
    cursor = page.cursor;
  } while (cursor && pages.length < 50);
  return pages;
}

async function snapshot(agent: Client): Promise<Record<string, string[]>> {
  const answers: Record<string, string[]> = {};
  for (const query of QUERIES) answers[query] = await searchAllPages(agent, query);
  return answers;
}

describe('tool search sees only what the key may use', () => {
  let p: RunningPlatform;
  let fixture: FixtureServer;
  let narrow: Client;
  let wide: Client;
  let orgId: string;

  beforeAll(async () => {
    p = await startPlatform();
    const tools: FixtureTool[] = GITHUB.tools.map((definition) => ({
      definition,
      run: () => ({ content: [{ type: 'text', text: `ran ${definition.name}` }] }),
    }));
    fixture = await startFixtureServer(tools, { pageSize: 50 });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Split', slug: 'split' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 's@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const github = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'github',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${github}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    // Tiers (shown in search answers) computed now, before the edge first loads the catalog; a
    // tool's tier without usage depends on the tool alone, so adding an upstream leaves them.
    const scores = await p.admin('POST', `/v1/orgs/${orgId}/tools/tier-scores`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.TierScores, [scores.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['github:*', 'everything:*'], deny: [] });
    const narrowKey = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'narrow', disclosureMode: 'PROGRESSIVE' })
    ).body;
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/policies/KEY/${narrowKey.key.id}`, {
          allow: ['github:*'],
          deny: ['github:delete_*'],
        })
      ).status,
    ).toBe(200);
    const wideKey = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'wide', disclosureMode: 'PROGRESSIVE' })
    ).body;
    narrow = await connectAgent(p.edgeUrl, narrowKey.secret);
    wide = await connectAgent(p.edgeUrl, wideKey.secret);
  });

  afterAll(async () => {
    await narrow?.close();
    await wide?.close();
    await fixture?.close();
    await p?.close();
  });

  it('should answer a key the same results, order and cursors when an upstream it may not use is added', async () => {
    const before = await snapshot(narrow);
    expect(before['create a new issue'].length).toBeGreaterThan(1);
    const first = JSON.parse(before['create a new issue'][0]) as SearchPage;
    expect(first.tools.map((t) => t.name)).toContain('github__create_issue');
    // The cursor counts the tools this key sees (not the 117 of the upstream, deleting ones included).
    expect(decodeSearchCursor(first.cursor ?? '').stats.docCount).toBe(NARROW_VISIBLE);

    // Another upstream, usable by the wide key only; the wide session hears the catalog change.
    const added = new Promise<void>((resolve) =>
      wide.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        if ((await search(wide, 'echo a message back')).page.tools.some((t) => t.name.startsWith('everything__')))
          resolve();
      }),
    );
    const everything = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'everything',
        transport: 'STDIO',
        ...SERVER_EVERYTHING,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${everything}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await added;
    const wideEcho = (await search(wide, 'echo a message back')).page;
    expect(wideEcho.tools[0].name).toBe('everything__echo');

    const after = await snapshot(narrow);
    expect(after).toEqual(before);
    for (const pages of Object.values(after)) {
      for (const json of pages) {
        const page = JSON.parse(json) as SearchPage;
        expect(page.tools.filter((t) => !t.name.startsWith('github__'))).toEqual([]);
        if (page.cursor) expect(decodeSearchCursor(page.cursor).stats.docCount).toBe(NARROW_VISIBLE);
      }
    }
  });
});
