import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QueueName } from '@tollgate/queue';
import { callMeta, connectAgent, toolError, waitForJobs } from '@tollgate/testing';
import { countTokens } from '@tollgate/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

const CAP = 600;

describe('output budgets and upstream time-outs through the edge', () => {
  let p: RunningPlatform;
  let fixture: FixtureServer;
  let agent: Client;
  let other: Client;
  let orgId: string;
  let otherKeyId: string;

  beforeAll(async () => {
    p = await startPlatform();
    fixture = await startFixtureServer();
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Out', slug: 'out' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'o@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const upstream = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'fixture',
      transport: 'STREAMABLE_HTTP',
      url: fixture.url,
      outputTokenCap: CAP,
      callTimeoutMs: 300,
    });
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstream.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fixture:*'], deny: [] });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId: upstream.body.id,
      toolPattern: '*',
      perCallMicros: 1_000,
    });
    agent = await connectAgent(
      p.edgeUrl,
      (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'a' })).body.secret,
    );
    const otherKey = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'b' });
    otherKeyId = otherKey.body.key.id;
    other = await connectAgent(p.edgeUrl, otherKey.body.secret);
  });

  afterAll(async () => {
    await agent?.close();
    await other?.close();
    await fixture?.close();
    await p?.close();
  });

  it('should page a large text result at line boundaries, every page within the cap, losing nothing', async () => {
    const expected = Array.from(
      { length: 400 },
      (_, i) => `line ${i}: the quick brown fox jumps over the lazy dog.`,
    ).join('\n');
    const first = (await agent.callTool({ name: 'fixture__huge', arguments: { lines: 400 } })) as CallToolResult;
    expect(first.isError ?? false).toBe(false);
    expect(callMeta(first)?.costMicros).toBe(1_000);
    let page = first._meta?.['tollgate/page'] as { handle: string; pages: number; nextCursor: string | null };
    expect(page.pages).toBeGreaterThan(2);
    const texts: string[] = [];
    let current = first;
    for (;;) {
      const [body, note] = current.content as { type: 'text'; text: string }[];
      expect(countTokens(body.text)).toBeLessThanOrEqual(CAP);
      texts.push(body.text);
      page = current._meta?.['tollgate/page'] as typeof page;
      if (!page.nextCursor) {
        expect(note.text).toContain('the end of the result');
        break;
      }
      expect(note.text).toContain('tollgate__read_result_page');
      expect(body.text.endsWith('\n')).toBe(true);
      current = (await agent.callTool({
        name: 'tollgate__read_result_page',
        arguments: { handle: page.handle, cursor: page.nextCursor },
      })) as CallToolResult;
      expect(current.isError ?? false).toBe(false); // each page read is billed (see billing-rules.e2e.test.ts)
    }
    expect(texts.join('')).toBe(expected);
  });

  it('should not let another key read the pages of a result', async () => {
    const first = (await agent.callTool({ name: 'fixture__huge', arguments: { lines: 300 } })) as CallToolResult;
    const handle = (first._meta?.['tollgate/page'] as { handle: string }).handle;
    const stolen = (await other.callTool({
      name: 'tollgate__read_result_page',
      arguments: { handle, cursor: '2' },
    })) as CallToolResult;
    expect(toolError(stolen)?.code).toBe('INVALID_REQUEST');
  });

  it('should refuse a result that cannot be paged with OUTPUT_BUDGET_EXCEEDED, its size and the cap', async () => {
    const res = (await agent.callTool({ name: 'fixture__big-image', arguments: {} })) as CallToolResult;
    expect(toolError(res)).toMatchObject({ code: 'OUTPUT_BUDGET_EXCEEDED', outputTokenCap: CAP });
    expect(toolError(res)!.outputTokens as number).toBeGreaterThan(CAP);
  });

  it('should answer UPSTREAM_TIMEOUT and charge nothing when the upstream is too slow', async () => {
    const res = (await agent.callTool({ name: 'fixture__slow', arguments: { ms: 3000 } })) as CallToolResult;
    expect(toolError(res)).toMatchObject({ code: 'UPSTREAM_TIMEOUT', charged: false });
    expect(callMeta(res)?.costMicros).toBe(0);
  });

  it('should refuse instead of paging, and apply a tighter cap, when the key policy says so', async () => {
    const put = await p.admin('PUT', `/v1/orgs/${orgId}/policies/KEY/${otherKeyId}`, {
      allow: ['fixture:*'],
      deny: [],
      outputTokenCap: 200,
      outputOverflow: 'REFUSE',
    });
    expect(put.status).toBe(200);
    const refused = (await other.callTool({ name: 'fixture__huge', arguments: { lines: 100 } })) as CallToolResult;
    expect(toolError(refused)).toMatchObject({ code: 'OUTPUT_BUDGET_EXCEEDED', outputTokenCap: 200 });
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/KEY/${otherKeyId}`, {
      allow: ['fixture:*'],
      deny: [],
      outputTokenCap: 200,
    });
    const paged = (await other.callTool({ name: 'fixture__huge', arguments: { lines: 100 } })) as CallToolResult;
    expect(paged.isError ?? false).toBe(false);
    expect(countTokens((paged.content[0] as { text: string }).text)).toBeLessThanOrEqual(200);
    // The first key keeps the upstream's cap.
    const first = (await agent.callTool({ name: 'fixture__huge', arguments: { lines: 100 } })) as CallToolResult;
    expect(countTokens((first.content[0] as { text: string }).text)).toBeGreaterThan(200);
  });
});
