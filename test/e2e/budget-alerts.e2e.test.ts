import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { JobName, QueueName } from '@tollgate/queue';
import { verifyWebhook } from '@tollgate/reporting';
import {
  callMeta,
  connectAgent,
  waitForJobs,
  waitForUsageEvents,
  waitForQueueIdle,
  testBullOptions,
} from '@tollgate/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';
import { orgKeyOf } from '@tollgate/redis';

const PRICE = 250_000;
const LIMIT = 1_000_000;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** When it arrived (performance.now()). */
  at: number;
}

/** A webhook receiver: answers `statusFor(n)` to the n-th request; `nth(n)` resolves when it arrives. */
async function startReceiver(statusFor: (n: number) => number) {
  const received: Received[] = [];
  const waiters: { n: number; resolve: (r: Received) => void }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now() });
      res.writeHead(statusFor(received.length)).end();
      for (const w of waiters.filter((w) => received.length >= w.n)) w.resolve(received[w.n - 1]);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    nth: (n: number) =>
      received.length >= n
        ? Promise.resolve(received[n - 1])
        : new Promise<Received>((resolve) => waiters.push({ n, resolve })),
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

const RETRY_DELAY_MS = 100;

function expectSigned(r: Received, secret: string) {
  const ts = String(r.headers['x-tollgate-timestamp']);
  const sig = String(r.headers['x-tollgate-signature']);
  expect(sig).toMatch(/^sha256=[0-9a-f]{64}$/);
  expect(verifyWebhook(secret, ts, r.body, sig, Math.floor(Date.now() / 1000))).toBe(true);
  return JSON.parse(r.body);
}

describe('budget alerts and reconciliation, end to end', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let redis: Redis;
  let fixture: FixtureServer;
  const agents: Client[] = [];
  const receivers: Receiver[] = [];

  interface Tenant {
    orgId: string;
    keyId: string;
    budgetId: string;
    agent: Client;
  }

  /** An org with one key on the fixture upstream, ping priced at PRICE, and a hard monthly key budget of LIMIT. */
  async function tenant(slug: string, thresholds: number[]): Promise<Tenant> {
    const orgId = (await p.admin('POST', '/v1/orgs', { name: slug, slug })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'team' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: `ops@${slug}.test` })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'agent' });
    const up = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'fx',
      transport: 'STREAMABLE_HTTP',
      url: fixture.url,
    });
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${up.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fx:*'], deny: [] })).status,
    ).toBe(200);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: up.body.id,
          toolPattern: 'ping',
          perCallMicros: PRICE,
        })
      ).status,
    ).toBe(201);
    const budget = await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
      scope: 'KEY',
      scopeId: key.body.key.id,
      period: 'MONTH',
      limitMicros: LIMIT,
      alertThresholds: thresholds,
    });
    expect(budget.status).toBe(200);
    const agent = await connectAgent(p.edgeUrl, key.body.secret);
    agents.push(agent);
    return { orgId, keyId: key.body.key.id, budgetId: budget.body.id, agent };
  }

  async function addWebhook(orgId: string, receiver: Receiver): Promise<string> {
    const res = await p.admin('POST', `/v1/orgs/${orgId}/alert-webhooks`, {
      url: receiver.url,
      description: 'test receiver',
    });
    expect(res.status).toBe(201);
    expect(res.body.secret).toMatch(/^whsec_/);
    return res.body.secret;
  }

  /** Real governed calls through the edge, then wait until the ledger has them. */
  async function spend(t: Tenant, calls: number): Promise<void> {
    const ids: string[] = [];
    for (let i = 0; i < calls; i++) {
      const res = await t.agent.callTool({ name: 'fx__ping', arguments: {} });
      expect(res.isError ?? false).toBe(false);
      ids.push(callMeta(res as never)!.callId);
    }
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, ids);
  }

  /** Runs one alert check for the org now and waits for it and every delivery it queued. */
  async function checkAlertsNow(orgId: string): Promise<void> {
    const q = new Queue(QueueName.BudgetAlerts, testBullOptions(p.env.redisUrl, p.env.redisPrefix));
    const job = await q.add(JobName.CheckBudgetAlerts, { orgId }, { jobId: `test-check-${Date.now()}` });
    await q.close();
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.BudgetAlerts, [job.id!]);
    await waitForQueueIdle(p.env.redisUrl, p.env.redisPrefix, QueueName.AlertDelivery);
  }

  async function reconcileNow(orgId: string) {
    const res = await p.admin('POST', `/v1/orgs/${orgId}/budgets/reconcile`);
    expect(res.status).toBe(202);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.BudgetReconcile, [res.body.jobId]);
    const last = await p.admin('GET', `/v1/orgs/${orgId}/budgets/reconcile`);
    expect(last.status).toBe(200);
    return last.body;
  }

  beforeAll(async () => {
    // A failed delivery is retried after 100 ms, then 200 ms (the default: 1 s, then 2 s).
    p = await startPlatform({ ALERT_RETRY_DELAY_MS: String(RETRY_DELAY_MS) });
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    redis = new Redis(p.env.redisUrl);
    fixture = await startFixtureServer();
  });

  afterAll(async () => {
    for (const a of agents) await a.close();
    for (const r of receivers) await r.close();
    await fixture?.close();
    redis?.disconnect();
    await db?.$disconnect();
    await p?.close();
  });

  it('should POST a correctly signed alert exactly once when a budget crosses 50% and then 100%', async () => {
    const t = await tenant('acme', [50, 100]);
    const receiver = await startReceiver(() => 204);
    receivers.push(receiver);
    const secret = await addWebhook(t.orgId, receiver);

    await spend(t, 2); // 500_000 of 1_000_000: exactly 50 %
    const first = expectSigned(await receiver.nth(1), secret);
    expect(first).toMatchObject({
      type: 'budget.threshold_crossed',
      orgId: t.orgId,
      threshold: 50,
      spentMicros: 500_000,
      budget: { id: t.budgetId, limitMicros: LIMIT, scope: 'KEY' },
    });

    await spend(t, 2); // 100 %
    const second = expectSigned(await receiver.nth(2), secret);
    expect(second).toMatchObject({ threshold: 100, spentMicros: LIMIT });
    expect((await receiver.nth(2)).headers['x-tollgate-alert-id']).toBe(second.id);

    // More checks find nothing new, and nothing is sent twice.
    await checkAlertsNow(t.orgId);
    await checkAlertsNow(t.orgId);
    expect(receiver.received).toHaveLength(2);
    const history = await p.admin('GET', `/v1/orgs/${t.orgId}/alerts`);
    expect(history.status).toBe(200);
    expect(history.body.map((a: { threshold: number }) => a.threshold)).toEqual([100, 50]);
    for (const a of history.body) {
      expect(a).toMatchObject({ budgetId: t.budgetId, attempts: 1, lastError: null });
      expect(a.deliveredAt).not.toBeNull();
    }
    // The webhook list never shows the secret.
    const hooks = await p.admin('GET', `/v1/orgs/${t.orgId}/alert-webhooks`);
    expect(JSON.stringify(hooks.body)).not.toContain(secret);
    expect((await db.alertWebhook.findFirstOrThrow({ where: { orgId: t.orgId } })).secretEnc).not.toContain(secret);
  });

  it('should retry a failing receiver with backoff and record every attempt until it is delivered', async () => {
    const t = await tenant('initech', [100]);
    const receiver = await startReceiver((n) => (n <= 2 ? 503 : 200));
    receivers.push(receiver);
    const secret = await addWebhook(t.orgId, receiver);

    await spend(t, 4);
    const delivered = await receiver.nth(3);
    const bodies = receiver.received.map((r) => expectSigned(r, secret));
    // The same alert each time, so a receiver can de-duplicate by id.
    expect(new Set(bodies.map((b) => b.id)).size).toBe(1);
    // Backed off: the second attempt at least the retry delay after the first, the third twice that.
    const [first, second, third] = receiver.received.map((r) => r.at);
    expect(second - first).toBeGreaterThanOrEqual(RETRY_DELAY_MS);
    expect(third - second).toBeGreaterThanOrEqual(2 * RETRY_DELAY_MS);
    expect(JSON.parse(delivered.body).threshold).toBe(100);

    await waitForQueueIdle(p.env.redisUrl, p.env.redisPrefix, QueueName.AlertDelivery);
    const [alert] = (await p.admin('GET', `/v1/orgs/${t.orgId}/alerts`)).body;
    expect(alert).toMatchObject({ threshold: 100, attempts: 3 });
    expect(alert.lastError).toContain('HTTP 503');
    expect(alert.deliveredAt).not.toBeNull();
    expect(receiver.received).toHaveLength(3);
  });

  it('should reject a webhook URL that is not http(s) or carries credentials, naming the field', async () => {
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'hooks', slug: 'hooks' })).body.id;
    for (const url of ['ftp://example.com/x', 'https://user:pw@example.com/x', 'not a url']) {
      const res = await p.admin('POST', `/v1/orgs/${orgId}/alert-webhooks`, { url });
      expect(res.status, url).toBe(400);
      expect(res.body.field).toBe('url');
    }
    const created = await p.admin('POST', `/v1/orgs/${orgId}/alert-webhooks`, { url: 'https://example.com/x' });
    expect((await p.admin('DELETE', `/v1/orgs/${orgId}/alert-webhooks/${created.body.webhook.id}`)).status).toBe(204);
    expect((await p.admin('DELETE', `/v1/orgs/${orgId}/alert-webhooks/${created.body.webhook.id}`)).status).toBe(404);
  });

  it('should report zero drift normally, the exact drift after a counter is tampered with, and rebuild a lost counter', async () => {
    const t = await tenant('umbrella', [100]);
    await spend(t, 3);
    const ledger = 3 * PRICE;

    const clean = await reconcileNow(t.orgId);
    expect(clean).toMatchObject({ orgId: t.orgId, budgetsChecked: 1, drift: [], rebuilt: [] });

    const [standing] = (await p.admin('GET', `/v1/orgs/${t.orgId}/reports/budgets`)).body;
    const counterKey = `${orgKeyOf(p.env.redisPrefix, t.orgId)}:budget:${t.budgetId}:${new Date(standing.periodStart).getTime()}`;
    expect(await redis.hget(counterKey, 'spent')).toBe(String(ledger));

    await redis.hset(counterKey, 'spent', String(ledger + 12_345));
    const drifted = await reconcileNow(t.orgId);
    expect(drifted.drift).toEqual([
      expect.objectContaining({
        budgetId: t.budgetId,
        scope: 'KEY',
        counterSpentMicros: ledger + 12_345,
        ledgerSpentMicros: ledger,
        driftMicros: 12_345,
      }),
    ]);

    await redis.del(counterKey);
    const rebuilt = await reconcileNow(t.orgId);
    expect(rebuilt.drift).toEqual([]);
    expect(rebuilt.rebuilt).toEqual([
      expect.objectContaining({ budgetId: t.budgetId, counterSpentMicros: null, ledgerSpentMicros: ledger }),
    ]);
    expect(await redis.hget(counterKey, 'spent')).toBe(String(ledger));
    expect(await redis.ttl(counterKey)).toBeGreaterThan(0);
  });
});
