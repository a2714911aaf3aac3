import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { QueueName } from '@tollgate/queue';
import { SERVER_EVERYTHING, connectAgent, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SloppyCatalogServer, startSloppyCatalogServer } from '../fixtures/sloppy-catalog-server';
import { RunningPlatform, startPlatform } from '../support/platform';

// A real server's catalog as it sends it: all 19 tools carry `"destructiveHint": null`.
const CATALOG = path.resolve(__dirname, '../fixtures/catalogs/livemcpbench-tools.json');
const npmSentinelTools = (): Record<string, unknown>[] => {
  const servers = JSON.parse(readFileSync(CATALOG, 'utf8')) as {
    tools: Record<string, { tools: Record<string, unknown>[] }>;
  }[];
  return servers.find((s) => s.tools['npm-sentinel-mcp'])!.tools['npm-sentinel-mcp'].tools;
};

describe('catalog sync of sloppy, capability-gated and session-keeping upstreams', () => {
  let p: RunningPlatform;
  let orgId: string;
  let agent: Client;
  let sloppy: SloppyCatalogServer;
  const realTools = npmSentinelTools();

  const sync = async (upstreamId: string) => {
    const res = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [res.body.jobId], 60_000);
  };
  const register = async (body: Record<string, unknown>) =>
    (await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, body)).body.id as string;
  const catalogued = async (upstreamId: string) =>
    ((await p.admin('GET', `/v1/orgs/${orgId}/tools`)).body as { upstreamId: string; name: string }[])
      .filter((t) => t.upstreamId === upstreamId)
      .map((t) => t.name)
      .sort();

  beforeAll(async () => {
    p = await startPlatform();
    sloppy = await startSloppyCatalogServer({
      tools: [
        ...realTools,
        {
          name: 'nullDescription',
          description: null,
          title: null,
          inputSchema: { type: 'object' },
          vendorExtra: { x: 1 },
        },
        { name: null, inputSchema: { type: 'object' } },
      ],
      gated: [
        {
          capability: 'elicitation',
          tool: { name: 'askUser', description: 'Asks the user a question.', inputSchema: { type: 'object' } },
        },
      ],
    });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Sloppy', slug: 'sloppy' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 's@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['npm:*', 'everything:*'], deny: [] });
    const key = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'full', disclosureMode: 'FULL' })
    ).body.secret;
    agent = await connectAgent(p.edgeUrl, key);
  });

  afterAll(async () => {
    await agent?.close();
    await sloppy?.close();
    await p?.close();
  });

  it('should keep every tool, drop the null fields and show warnings on the upstream when an upstream sends null hints', async () => {
    const upstreamId = await register({ namespace: 'npm', transport: 'STREAMABLE_HTTP', url: sloppy.url });
    await sync(upstreamId);

    const names = await catalogued(upstreamId);
    expect(names).toEqual([...realTools.map((t) => t.name as string), 'askUser', 'nullDescription'].sort());

    const upstream = (await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${upstreamId}`)).body;
    expect(upstream.lastSyncError).toBeNull();
    expect(upstream.lastSyncWarnings).toEqual(
      expect.arrayContaining([
        'tool npmVersions: annotations.destructiveHint is null: field dropped',
        'tool nullDescription: description is null: field dropped',
        'tool nullDescription: title is null: field dropped',
        'tools[20] has name null: tool dropped',
      ]),
    );

    // The agent's strict SDK client accepts the edge's list, with the valid hints kept.
    const served = (await agent.listTools()).tools.find((t) => t.name === 'npm__npmVersions');
    expect(served?.annotations).toEqual({
      title: 'Get All Package Versions',
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: true,
    });
  });

  it('should leave no upstream session open when a sync is done', async () => {
    const opened = sloppy.sessionsOpened;
    // Registering also syncs (at once and on the schedule): only the total is known, not the count.
    const upstreamId = await register({ namespace: 'npm2', transport: 'STREAMABLE_HTTP', url: sloppy.url });
    await sync(upstreamId);
    await sync(upstreamId);
    // The syncs that registering starts (at once and on the schedule) are not awaited here, so the
    // last session's end is awaited as an event; the cap only ends a run where one never closes.
    await sloppy.allSessionsClosed(60_000);
    expect(sloppy.sessionsOpened - opened).toBeGreaterThanOrEqual(2);
    expect(sloppy.deletes).toBe(sloppy.sessionsOpened);
  });

  it('should catalogue the tools the reference server lists only to clients that can answer sampling and elicitation', async () => {
    const upstreamId = await register({ namespace: 'everything', transport: 'STDIO', ...SERVER_EVERYTHING });
    await sync(upstreamId);
    expect(await catalogued(upstreamId)).toEqual(
      expect.arrayContaining(['trigger-sampling-request', 'trigger-elicitation-request']),
    );
  });
});
