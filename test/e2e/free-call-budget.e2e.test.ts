import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { QueueName } from '@tollgate/queue';
import { COUNTER_CORRUPT_CHANNEL } from '@tollgate/budget';
import { channelName, orgKeyOf } from '@tollgate/redis';
import {
  SERVER_EVERYTHING,
  callMeta,
  connectAgent,
  textOf,
  toolError,
  waitForJobs,
  waitForUsageEvents,
} from '@tollgate/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';

const PRICE_PER_ECHO = 250_000;
const KEY_LIMIT = 1_000_000;

/**
 * A free tool under a budget: a key with a budget of its own calls a tool no price rule covers.
 * Its calls reserve 0; they must be admitted, answered and metered like priced ones, and leave
 * the organisation's priced calls working (a zero amount once locked an organisation out).
 */
describe('free calls under a budget, end to end', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let orgId: string;
  let agent: Client;
  let teamId: string;
  let userId: string;

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Free', slug: 'free' })).body.id;
    teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'f@free.test' })).body.id;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId })).status).toBe(201);
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'agent' });
    expect(key.status).toBe(201);
    const everything = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'everything',
      transport: 'STDIO',
      ...SERVER_EVERYTHING,
    });
    expect(everything.status).toBe(201);
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${everything.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['everything:*'], deny: [] })).status,
    ).toBe(200);
    // Only echo has a price: get-sum is free.
    const price = await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId: everything.body.id,
      toolPattern: 'echo',
      perCallMicros: PRICE_PER_ECHO,
    });
    expect(price.status).toBe(201);
    const budget = await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
      scope: 'KEY',
      scopeId: key.body.key.id,
      period: 'MONTH',
      limitMicros: KEY_LIMIT,
    });
    expect(budget.status).toBe(200);
    agent = await connectAgent(p.edgeUrl, key.body.secret);
  });

  afterAll(async () => {
    await agent?.close();
    await db?.$disconnect();
    await p?.close();
  });

  it('should admit, answer and meter free calls under a key budget, one by one and many at once, and still charge priced ones', async () => {
    const callIds: string[] = [];
    const free = async (i: number) => {
      const res = await agent.callTool({ name: 'everything__get-sum', arguments: { a: i, b: 1 } });
      expect(res.isError ?? false).toBe(false);
      expect(textOf(res as never)).toContain(String(i + 1));
      const meta = callMeta(res as never)!;
      expect(meta.costMicros).toBe(0);
      expect((res._meta as any)['tollgate/budget'].remainingMicros).toBe(KEY_LIMIT);
      callIds.push(meta.callId);
    };
    // The first calls go to Redis one by one (reserving 0), later ones under a lease.
    for (let i = 0; i < 5; i++) await free(i);
    // Completions of one event-loop turn share a script.
    await Promise.all(Array.from({ length: 20 }, (_, i) => free(100 + i)));

    const echo = await agent.callTool({ name: 'everything__echo', arguments: { message: 'paid' } });
    expect(echo.isError ?? false).toBe(false);
    expect(textOf(echo as never)).toBe('Echo: paid');
    const meta = callMeta(echo as never)!;
    expect(meta.costMicros).toBe(PRICE_PER_ECHO);
    expect((echo._meta as any)['tollgate/budget'].remainingMicros).toBe(KEY_LIMIT - PRICE_PER_ECHO);
    callIds.push(meta.callId);

    // Every call that was answered is in the ledger once, at its price.
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, callIds);
    const rows = await db.usageEvent.findMany({ where: { orgId } });
    expect(rows.map((r) => r.id).sort()).toEqual([...callIds].sort());
    expect(rows.filter((r) => r.costMicros > 0n).map((r) => r.id)).toEqual([meta.callId]);
    expect(rows.every((r) => r.outcome === 'OK')).toBe(true);
  });

  // A counter field that is not an integer (HINCRBY refuses it) makes the edge refuse the call
  // cleanly and ask the worker to rebuild the counter at once (not at the next scheduled
  // reconciliation, minutes away), so the retry hint is true: each step is awaited as it happens.
  it('should refuse a call on a corrupt counter with a retry hint, ask for its rebuild at once, and admit it again once rebuilt', async () => {
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'corrupt' });
    const budget = await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
      scope: 'KEY',
      scopeId: key.body.key.id,
      period: 'TOTAL',
      limitMicros: KEY_LIMIT,
    });
    expect(budget.status).toBe(200);
    const redis = new Redis(p.env.redisUrl);
    const listener = new Redis(p.env.redisUrl);
    const corrupt = await connectAgent(p.edgeUrl, key.body.secret);
    try {
      await redis.hset(`${orgKeyOf(p.env.redisPrefix, orgId)}:budget:${budget.body.id}:0`, 'spent', '1.5');
      // What the edge asks the worker, heard as the worker hears it.
      await listener.subscribe(channelName(p.env.redisPrefix, COUNTER_CORRUPT_CHANNEL));
      const rebuildAsked = new Promise<string>((resolve) => listener.once('message', (_channel, org) => resolve(org)));
      const call = () => corrupt.callTool({ name: 'everything__echo', arguments: { message: 'again' } });
      const refused = await call();
      expect(toolError(refused as never)).toMatchObject({
        code: 'COUNTERS_UNAVAILABLE',
        charged: false,
        retryAfterMs: expect.any(Number),
      });
      const hintMs = toolError(refused as never)!.retryAfterMs as number;
      expect(toolError(refused as never)!.hint).toContain(`Retry after ${hintMs / 1000} s`);
      // Asked by the refusal itself, then rebuilt from the ledger by the worker (its audit row).
      expect(await rebuildAsked).toBe(orgId);
      await expect
        .poll(() =>
          db.auditEvent.count({ where: { orgId, action: 'budget.counter-rebuilt', targetId: budget.body.id } }),
        )
        .toBe(1);
      const answered = await call();
      expect(textOf(answered as never)).toBe('Echo: again');
      expect(callMeta(answered as never)!.costMicros).toBe(PRICE_PER_ECHO);
    } finally {
      await corrupt.close();
      listener.disconnect();
      redis.disconnect();
    }
  });
});
