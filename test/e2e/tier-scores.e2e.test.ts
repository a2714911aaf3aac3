import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { QueueName } from '@tollgate/queue';
import { callMeta, connectAgent, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { countJsonTokens } from '@tollgate/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

const upstreamNames = (tools: { name: string }[]) =>
  tools.map((t) => t.name).filter((n) => !n.startsWith('tollgate__'));

describe('tier scores from usage, the hot list and the key preview', () => {
  let p: RunningPlatform;
  let fixture: FixtureServer;
  let agent: Client;
  let fullAgent: Client;
  let orgId: string;
  const keyIds: Record<string, string> = {};

  beforeAll(async () => {
    p = await startPlatform();
    fixture = await startFixtureServer();
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Busy', slug: 'busy' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'b@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fx:*'], deny: [] });
    const upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'fx',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    const progressive = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
        teamId,
        userId,
        name: 'progressive',
        disclosureMode: 'PROGRESSIVE',
      })
    ).body;
    const full = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'full', disclosureMode: 'FULL' })
    ).body;
    keyIds.progressive = progressive.key.id;
    keyIds.full = full.key.id;
    agent = await connectAgent(p.edgeUrl, progressive.secret);
    fullAgent = await connectAgent(p.edgeUrl, full.secret);
  });

  afterAll(async () => {
    await agent?.close();
    await fullAgent?.close();
    await fixture?.close();
    await p?.close();
  });

  it('should give a new organisation without usage a non-empty hot list', async () => {
    // A sync that added tools queues a tier-score pass for the org (the queue also holds the schedule's next run).
    await expect
      .poll(
        async () =>
          ((await p.admin('GET', `/v1/orgs/${orgId}/tools`)).body as { tierScore: number }[]).filter(
            (t) => t.tierScore > 0,
          ).length,
        { timeout: 15_000 },
      )
      .toBe(6);
    const tools = (await p.admin('GET', `/v1/orgs/${orgId}/tools`)).body as { name: string; tierScore: number }[];
    expect(tools.every((t) => t.tierScore > 0 && t.tierScore <= 0.25)).toBe(true);
    expect(upstreamNames((await agent.listTools()).tools).length).toBeGreaterThan(0);
  });

  it('should make the most used reliable tool HOT and put it first in the progressive hot list once its usage is in the ledger', async () => {
    const callIds: string[] = [];
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      callIds.push(callMeta((await fullAgent.callTool({ name, arguments: args })) as never)!.callId);
    for (let i = 0; i < 6; i++) await call('fx__ping');
    for (let i = 0; i < 2; i++) await call('fx__huge', { lines: 3 });
    for (let i = 0; i < 3; i++) await call('fx__fail');
    // In the ledger is rolled up: its insert trigger adds the calls to the daily rollup scores read.
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, callIds);
    const scores = await p.admin('POST', `/v1/orgs/${orgId}/tools/tier-scores`);
    expect(scores.status).toBe(202);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.TierScores, [scores.body.jobId]);

    const byName = Object.fromEntries(
      (
        (await p.admin('GET', `/v1/orgs/${orgId}/tools`)).body as { name: string; tier: string; tierScore: number }[]
      ).map((t) => [t.name, t]),
    );
    expect(byName.ping.tier).toBe('HOT');
    expect(byName.ping.tierScore).toBeGreaterThan(byName.huge.tierScore);
    // Failing calls make a busy tool less reliable than a quieter one that works.
    expect(byName.fail.tierScore).toBeLessThan(byName.huge.tierScore);
    expect(byName.fail.tier).not.toBe('HOT');
    expect(byName.slow.tierScore).toBeLessThan(byName.fail.tierScore);

    await expect
      .poll(async () => upstreamNames((await agent.listTools()).tools).slice(0, 3))
      .toEqual(['fx__ping', 'fx__huge', 'fx__fail']);
  });

  it('should preview what a progressive key’s agent sees: the same hot tools, within the initial budget', async () => {
    const res = await p.admin('GET', `/v1/orgs/${orgId}/keys/${keyIds.progressive}/preview`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      keyId: keyIds.progressive,
      requestedMode: 'PROGRESSIVE',
      mode: 'PROGRESSIVE',
      visibleTools: 6,
    });
    expect(res.body.hot.slice(0, 3)).toEqual(['fx__ping', 'fx__huge', 'fx__fail']);
    expect(res.body.tokens).toBe(countJsonTokens({ tools: res.body.tools }));
    expect(res.body.tokens).toBeLessThanOrEqual(1_500);
    expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['tollgate__search_tools', 'tollgate__call_tool']),
    );
    expect(upstreamNames((await agent.listTools()).tools)).toEqual(res.body.hot);
  });

  it('should preview a full-mode key with exactly the upstream tools the edge lists', async () => {
    const res = await p.admin('GET', `/v1/orgs/${orgId}/keys/${keyIds.full}/preview`);
    expect(res.body).toMatchObject({ mode: 'FULL', hot: [] });
    const edge = await fullAgent.listTools();
    expect(res.body.tools).toEqual(JSON.parse(JSON.stringify(edge.tools)));
    expect(res.body.tokens).toBe(
      (edge._meta as { 'tollgate/disclosure': { tokens: number } })['tollgate/disclosure'].tokens,
    );
    expect(res.body.plainListTokens).toBeGreaterThan(0);
  });

  it('should not preview another organisation’s key', async () => {
    const otherOrg = (await p.admin('POST', '/v1/orgs', { name: 'Other', slug: 'other' })).body.id;
    expect((await p.admin('GET', `/v1/orgs/${otherOrg}/keys/${keyIds.full}/preview`)).status).toBe(404);
  });
});
