import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { QueueName } from '@tollgate/queue';
import { usageOutboxKeys } from '@tollgate/usage';
import { callMeta, waitForJobs } from '@tollgate/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { OwnRedis, startOwnRedis } from '../support/outages';
import { RunningPlatform, startPlatform } from '../support/platform';
import { orgKeyOf, shardOf } from '@tollgate/redis';

const PRICE = 1_000;

/** No answered call is unbilled: an agent's answer leaves the edge only once its charge and usage event are in Redis. */
describe('call completion, end to end (own redis-server)', () => {
  let own: OwnRedis;
  let p: RunningPlatform;
  let redis: Redis;
  let db: PrismaClient;
  let fixture: FixtureServer;
  let orgId: string;
  let budgetId: string;

  const spent = async () => {
    const [key] = await redis.keys(`${orgKeyOf(p.env.redisPrefix, orgId)}:budget:${budgetId}:*`);
    return Number(await redis.hget(key, 'spent'));
  };
  /** The call's usage event is in the outbox, or the worker has already moved it to the ledger. */
  const recorded = async (callId: string) => {
    const inOutbox = (await redis.xrange(usageOutboxKeys(p.env.redisPrefix, shardOf(orgId)).events, '-', '+')).some(
      ([, f]) => f[1].includes(`"${callId}"`),
    );
    return inOutbox || (await db.usageEvent.count({ where: { id: callId } })) === 1;
  };
  let keySecret: string;
  let n = 0;
  /** A stateless tools/call (no session, whose upkeep would write to Redis before the upstream). */
  const ping = async (): Promise<CallToolResult> => {
    const res = await fetch(`${p.edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${keySecret}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++n,
        method: 'tools/call',
        params: { name: 'fixture__ping', arguments: {} },
      }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { result: CallToolResult }).result;
  };

  beforeAll(async () => {
    own = await startOwnRedis();
    p = await startPlatform({ REDIS_URL: own.url });
    redis = new Redis(own.url);
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startFixtureServer();
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Acme', slug: 'acme' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'u@acme.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'agent' });
    const upstream = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'fixture',
      transport: 'STREAMABLE_HTTP',
      url: fixture.url,
    });
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstream.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fixture:*'], deny: [] });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId: upstream.body.id,
      toolPattern: '*',
      perCallMicros: PRICE,
    });
    const budget = await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
      scope: 'KEY',
      scopeId: key.body.key.id,
      period: 'MONTH',
      limitMicros: 1_000_000_000,
    });
    expect([upstream.status, budget.status], JSON.stringify([upstream.body, budget.body])).toEqual([201, 200]);
    budgetId = budget.body.budget?.id ?? budget.body.id;
    keySecret = key.body.secret;
  });

  afterAll(async () => {
    await fixture?.close();
    await db?.$disconnect();
    redis?.disconnect();
    await p?.close();
    await own?.kill();
  });

  it('should have the charge and the usage event in Redis the moment the agent has the answer', async () => {
    for (let i = 0; i < 5; i++) {
      const before = await spent().catch(() => 0);
      const result = await ping();
      // Read at once, before anything else runs in the edge for this call.
      const [after, inBooks] = [await spent(), await recorded(callMeta(result)!.callId)];
      expect(result.isError).toBeFalsy();
      expect(after - (Number.isNaN(before) ? 0 : before)).toBe(PRICE);
      expect(inBooks).toBe(true);
    }
  });

  it("should not answer while Redis does not take the call's completion (CLIENT PAUSE WRITE)", async () => {
    // Leases are warm (the calls above) and the call has no session: nothing before the upstream
    // writes to Redis, so only the completion waits.
    const upstreamCalls = fixture.calls.length;
    const pausedAt = Date.now();
    await redis.client('PAUSE', 1_000, 'WRITE');
    let answeredAt = 0;
    const call = ping().then((r) => ((answeredAt = Date.now()), r));
    // The upstream has answered; the agent has not been answered.
    await expect.poll(() => fixture.calls.length).toBe(upstreamCalls + 1);
    expect(answeredAt).toBe(0);
    const result = await call;
    expect(answeredAt - pausedAt).toBeGreaterThanOrEqual(990);
    expect(await recorded(callMeta(result)!.callId)).toBe(true);
  });
});
