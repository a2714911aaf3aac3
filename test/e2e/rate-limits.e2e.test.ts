import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { QueueName } from '@tollgate/queue';
import { connectAgent, TestClock, toolError, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

describe('rate limits through the edge', () => {
  const clock = new TestClock();
  let p: RunningPlatform;
  let fixture: FixtureServer;
  let agent: Client;
  let orgId: string;
  let keyId: string;
  let teamId: string;
  let userId: string;

  beforeAll(async () => {
    p = await startPlatform({}, { clock });
    fixture = await startFixtureServer();
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Rl', slug: 'rl' })).body.id;
    teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'r@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'k' });
    keyId = key.body.key.id;
    const upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'fixture',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fixture:*'], deny: [] });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, { upstreamId, toolPattern: '*', perCallMicros: 1000 });
    agent = await connectAgent(p.edgeUrl, key.body.secret);
  });

  afterAll(async () => {
    await agent?.close();
    await fixture?.close();
    await p?.close();
  });

  it('should refuse the call over the limit with retryAfter, before the upstream and without charge', async () => {
    const created = await p.admin('POST', `/v1/orgs/${orgId}/rate-limits`, {
      scope: 'KEY',
      scopeId: keyId,
      toolPattern: 'fixture:ping',
      callsPerWindow: 3,
      windowSeconds: 60,
    });
    expect(created.status).toBe(201);
    const before = fixture.calls.length;
    for (let i = 0; i < 3; i++)
      expect((await agent.callTool({ name: 'fixture__ping', arguments: {} })).isError ?? false).toBe(false);
    const refused = await agent.callTool({ name: 'fixture__ping', arguments: {} });
    expect(refused.isError).toBe(true);
    const err = toolError(refused as never)!;
    expect(err).toMatchObject({
      code: 'RATE_LIMITED',
      scope: 'KEY',
      limitKind: 'WINDOW',
      callsPerWindow: 3,
      windowSeconds: 60,
    });
    expect(err.retryAfterMs as number).toBeGreaterThan(0);
    // The rest of this window, and then a third of the next, while these 3 calls weigh more than 2.
    expect(err.retryAfterMs as number).toBeLessThanOrEqual(80_000);
    expect(fixture.calls.length - before).toBe(3);
    expect(refused._meta?.['tollgate/call']).toBeUndefined();
  });

  it('should hold concurrent calls to the cap and admit again once a call finishes', async () => {
    await p.admin('POST', `/v1/orgs/${orgId}/rate-limits`, {
      scope: 'KEY',
      scopeId: keyId,
      toolPattern: 'fixture:slow',
      maxConcurrent: 2,
    });
    const results = await Promise.all(
      [0, 1, 2].map(() => agent.callTool({ name: 'fixture__slow', arguments: { ms: 400 } })),
    );
    const codes = results.map((r) => toolError(r as never)?.code ?? 'OK').sort();
    expect(codes).toEqual(['OK', 'OK', 'RATE_LIMITED']);
    expect((await agent.callTool({ name: 'fixture__slow', arguments: { ms: 1 } })).isError ?? false).toBe(false);
  });

  it('should admit the same call once retryAfterMs has passed, and refuse it clearly before', async () => {
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'exact' });
    await p.admin('POST', `/v1/orgs/${orgId}/rate-limits`, {
      scope: 'KEY',
      scopeId: key.body.key.id,
      toolPattern: 'fixture:ping',
      callsPerWindow: 2,
      windowSeconds: 2,
    });
    const exact = await connectAgent(p.edgeUrl, key.body.secret);
    const ping = async () =>
      toolError((await exact.callTool({ name: 'fixture__ping', arguments: {} })) as never)?.code ?? 'OK';
    try {
      // The edge's clock stands still 50 ms into a window and moves only as told: no waiting, and
      // no call's own duration eats into a margin.
      clock.freeze(Math.ceil(clock.now() / 2_000) * 2_000 + 50);
      expect([await ping(), await ping()]).toEqual(['OK', 'OK']);
      // Refused with a full window, then with the previous window still weighing: each time the
      // call is refused 1 ms before the time said, and admitted at it.
      for (let round = 0; round < 2; round++) {
        const refused = toolError((await exact.callTool({ name: 'fixture__ping', arguments: {} })) as never)!;
        expect(refused).toMatchObject({ code: 'RATE_LIMITED', limitKind: 'WINDOW' });
        const retryAfterMs = refused.retryAfterMs as number;
        expect(retryAfterMs).toBeGreaterThan(400);
        clock.advance(retryAfterMs - 1);
        expect(await ping()).toBe('RATE_LIMITED');
        clock.advance(1);
        expect(await ping()).toBe('OK');
      }
    } finally {
      await exact.close();
    }
  });

  it('should reject a rate limit with a bad pattern or neither limit, naming the field', async () => {
    const bad = await p.admin('POST', `/v1/orgs/${orgId}/rate-limits`, {
      scope: 'KEY',
      scopeId: keyId,
      toolPattern: 'a:b:c',
      callsPerWindow: 1,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('toolPattern');
    const none = await p.admin('POST', `/v1/orgs/${orgId}/rate-limits`, { scope: 'KEY', scopeId: keyId });
    expect(none.status).toBe(400);
    expect(none.body.field).toBe('callsPerWindow');
  });
});
