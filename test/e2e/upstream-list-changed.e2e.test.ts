import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QueueName } from '@tollgate/queue';
import { REPO_ROOT, connectAgent, textOf, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';

describe('an upstream that announces tools/list_changed', () => {
  let p: RunningPlatform;

  beforeAll(async () => {
    p = await startPlatform();
  });

  afterAll(async () => {
    await p?.close();
  });

  it('should re-sync the upstream and tell connected sessions, so the new tool can be called', async () => {
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Grow', slug: 'grow' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'g@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const upstream = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'growing',
      transport: 'STDIO',
      command: process.execPath,
      args: [
        path.join(REPO_ROOT, 'test/fixtures/list-changed-server.mjs'),
        path.join(mkdtempSync(path.join(os.tmpdir(), 'tg-grow-')), 'tools.json'),
      ],
    });
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstream.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['growing:*'], deny: [] });
    const agent = await connectAgent(
      p.edgeUrl,
      (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'k' })).body.secret,
    );
    try {
      expect((await agent.listTools()).tools.map((t) => t.name)).not.toContain('growing__extra-1');
      // The edge's pooled connection hears the upstream's list_changed, the worker re-syncs, and
      // the catalog change reaches this session as its own list_changed.
      const seen = new Promise<void>((resolve) =>
        agent.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
          if ((await agent.listTools()).tools.some((t) => t.name === 'growing__extra-1')) resolve();
        }),
      );
      expect(textOf((await agent.callTool({ name: 'growing__grow', arguments: {} })) as CallToolResult)).toBe(
        'added extra-1',
      );
      await seen;
      expect(textOf((await agent.callTool({ name: 'growing__extra-1', arguments: {} })) as CallToolResult)).toBe(
        'ran extra-1',
      );
    } finally {
      await agent.close();
    }
  });
});
