import path from 'node:path';
import { QueueName } from '@tollgate/queue';
import { waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConformanceServer, startConformanceServer } from '../fixtures/conformance-server';
import { RunningPlatform, startPlatform } from '../support/platform';
import { runConformance } from './run-conformance';

// The suite names fixed tools, resources and prompts (test_simple_text, test://static-text,
// test_simple_prompt): the project's conformance fixture sits behind the edge as an upstream exposed
// unprefixed, so those names reach the suite unchanged, with the edge's governance on throughout.
// Two upstreams, as published servers come: one whose 2026-07-28 path lists tools and a prompt its
// 2025-11-25 session does not, and one that speaks only 2026-07-28. Each revision's agents must
// pass against each (the baselines name what does not pass yet, and why).
const UPSTREAMS = [
  { slug: 'paths-differ', pathsDiffer: true },
  { slug: 'stateless-only', statelessOnly: true },
];

describe.each(UPSTREAMS)('MCP conformance suite through the edge, upstream fixture $slug', (upstream) => {
  let p: RunningPlatform;
  let fixture: ConformanceServer;
  let key: string;

  beforeAll(async () => {
    p = await startPlatform();
    fixture = await startConformanceServer(upstream);
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Conformance', slug: upstream.slug })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'c@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const created = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'conformance' })).body;
    key = created.secret;
    const upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'conformance',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
        callTimeoutMs: 20_000,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/upstreams/${upstreamId}/exposure`, { exposeUnprefixed: true })).status,
    ).toBe(200);
    // Governance stays on: a policy that allows the fixture, a price for each kind, a hard budget.
    const policy = {
      allow: ['conformance:*'],
      deny: [],
      resourceAllow: ['conformance:*'],
      promptAllow: ['conformance:*'],
    };
    expect((await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, policy)).status).toBe(200);
    for (const toolPattern of ['*', 'resource:*', 'prompt:*']) {
      expect(
        (await p.admin('POST', `/v1/orgs/${orgId}/prices`, { upstreamId, toolPattern, perCallMicros: 10 })).status,
      ).toBe(201);
    }
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'KEY',
          scopeId: created.key.id,
          period: 'MONTH',
          limitMicros: 10_000_000,
        })
      ).status,
    ).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await p?.close();
    await fixture?.close();
  });

  it('should pass every scored 2025-11-25 scenario, with a baseline that names the rest and why', async () => {
    const result = await runConformance({
      url: `${p.edgeUrl}/mcp`,
      headers: { Authorization: `Bearer ${key}` },
      baselineFile: path.join(__dirname, `baseline-${upstream.slug}-2025-11-25.yml`),
      requirements: '2025-11-25',
      timeoutMs: 8 * 60_000,
    });
    console.log(
      `2025-11-25 through the edge (${upstream.slug}): ${result.passed.length} passed, failed: ${result.failed.join(', ')}`,
    );
    expect(result.unexpectedFailures, JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.staleBaselineEntries).toEqual([]);
    expect(result.passed, result.output).toEqual(
      expect.arrayContaining([
        'server-initialize',
        'ping',
        'tools-list',
        'tools-call-simple-text',
        'tools-call-sampling',
        'tools-call-elicitation',
        'resources-read-text',
        'prompts-get-simple',
        'completion-complete',
      ]),
    );
  }, 600_000);

  // 2026-07-28 through the same edge and upstream: the edge serves the stateless revision itself,
  // speaks the upstream's newest revision, and relays input-required rounds with their keys.
  it('should pass every scored 2026-07-28 scenario, with a baseline that names the rest and why', async () => {
    const result = await runConformance({
      url: `${p.edgeUrl}/mcp`,
      headers: { Authorization: `Bearer ${key}` },
      baselineFile: path.join(__dirname, `baseline-${upstream.slug}-2026-07-28.yml`),
      requirements: '2026-07-28',
      timeoutMs: 8 * 60_000,
    });
    console.log(
      `2026-07-28 through the edge (${upstream.slug}): ${result.passed.length} passed, failed: ${result.failed.join(', ')}`,
    );
    expect(result.unexpectedFailures, JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.staleBaselineEntries).toEqual([]);
    expect(result.passed, result.output).toEqual(
      expect.arrayContaining([
        'server-stateless',
        'caching',
        'tools-call-with-progress',
        'input-required-result-basic-elicitation',
        'input-required-result-multi-round',
        'input-required-result-non-tool-request',
      ]),
    );
  }, 600_000);
});
