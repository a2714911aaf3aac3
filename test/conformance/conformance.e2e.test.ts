import path from 'node:path';
import { QueueName } from '@tollgate/queue';
import { SERVER_EVERYTHING, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';
import { runConformance } from './run-conformance';

describe('MCP conformance suite against the edge', () => {
  let p: RunningPlatform;
  let key: string;

  beforeAll(async () => {
    p = await startPlatform();
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Conformance', slug: 'conformance' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'c@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    key = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'conformance' })).body.secret;
    const upstreamId = (await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, { namespace: 'everything', transport: 'STDIO', ...SERVER_EVERYTHING })).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['everything:*'], deny: [] });
  });

  afterAll(async () => {
    await p?.close();
  });

  it('should pass every scenario that applies to a gateway, with a baseline that names the rest', async () => {
    const result = await runConformance({
      url: `${p.edgeUrl}/mcp`,
      headers: { Authorization: `Bearer ${key}` },
      baselineFile: path.join(__dirname, 'baseline.yml'),
      suite: 'active',
    });
    expect(result.passed.length, result.output).toBeGreaterThanOrEqual(5);
    expect(result.passed).toEqual(expect.arrayContaining(['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection', 'logging-set-level']));
    expect(result.unexpectedFailures, JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.staleBaselineEntries).toEqual([]);
  }, 600_000);
});
