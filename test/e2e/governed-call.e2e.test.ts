import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { usageEntryFields, usageOutboxKeys } from '@tollgate/usage';
import { QueueName } from '@tollgate/queue';
import { Redis } from 'ioredis';
import {
  SERVER_EVERYTHING,
  callMeta,
  connectAgent,
  textOf,
  toolError,
  waitForJobs,
  waitForUsageEvents,
} from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

const PRICE_PER_ECHO = 250_000; // 0.25 per call
const CALLS_ALLOWED = 4;

describe('governed call, end to end', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let orgId: string;
  let keySecret: string;
  let keyId: string;
  let everythingId: string;
  let flakyId: string;
  let flaky: FixtureServer;
  let agent: Client;

  async function syncNow(upstreamId: string) {
    const res = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    expect(res.status).toBe(202);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [res.body.jobId]);
  }

  async function ledgerRows() {
    return db.usageEvent.findMany({ where: { orgId }, orderBy: { occurredAt: 'asc' } });
  }

  async function drainLedger(callIds: string[]) {
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, callIds);
  }

  // Everything the three apps print during the run, to prove no secret ever reaches a log line.
  const logged: string[] = [];
  const realWrites = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };

  beforeAll(async () => {
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => (
      logged.push(String(chunk)),
      realWrites.out(chunk, ...rest)
    )) as never;
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => (
      logged.push(String(chunk)),
      realWrites.err(chunk, ...rest)
    )) as never;
    p = await startPlatform({ LOG_LEVEL: 'verbose' });
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    flaky = await startFixtureServer();

    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Acme', slug: 'acme' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'platform' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'ada@acme.test' })).body.id;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId })).status).toBe(201);
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'agent' });
    expect(key.status).toBe(201);
    keySecret = key.body.secret;
    keyId = key.body.key.id;

    const everything = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'everything',
      transport: 'STDIO',
      ...SERVER_EVERYTHING,
    });
    expect(everything.status).toBe(201);
    everythingId = everything.body.id;
    const flakyRes = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'flaky',
      transport: 'STREAMABLE_HTTP',
      url: flaky.url,
      callTimeoutMs: 5000,
    });
    expect(flakyRes.status).toBe(201);
    flakyId = flakyRes.body.id;
    await syncNow(everythingId);
    await syncNow(flakyId);

    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
          allow: ['everything:*', 'flaky:*'],
          deny: ['everything:get-env'],
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: everythingId,
          toolPattern: 'echo',
          perCallMicros: PRICE_PER_ECHO,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: flakyId,
          toolPattern: '*',
          perCallMicros: 100_000,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'KEY',
          scopeId: keyId,
          period: 'MONTH',
          limitMicros: PRICE_PER_ECHO * CALLS_ALLOWED + 100_000,
        })
      ).status,
    ).toBe(200);

    agent = await connectAgent(p.edgeUrl, keySecret);
  });

  afterAll(async () => {
    process.stdout.write = realWrites.out;
    process.stderr.write = realWrites.err;
    await agent?.close();
    await flaky?.close();
    await db?.$disconnect();
    await p?.close();
  });

  it('should store every tool of the upstream with its definition hash and token count when synced', async () => {
    const tools = await db.tool.findMany({ where: { upstreamId: everythingId } });
    expect(tools.length).toBeGreaterThanOrEqual(10);
    for (const t of tools) {
      expect(t.definitionHash).toMatch(/^[0-9a-f]{64}$/);
      expect(t.schemaTokens).toBeGreaterThan(10);
      expect(t.pinnedHash).toBe(t.definitionHash);
    }
  });

  it('should list only allowed tools, namespaced, with their price when an agent lists tools', async () => {
    const { tools } = await agent.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain('everything__echo');
    expect(names).toContain('flaky__ping');
    expect(names).not.toContain('everything__get-env');
    const echo = tools.find((t) => t.name === 'everything__echo')!;
    expect(echo._meta?.['tollgate/price']).toMatchObject({ perCallMicros: PRICE_PER_ECHO });
  });

  it('should refuse a denied tool with a structured tool error and never reach the upstream', async () => {
    const res = await agent.callTool({ name: 'everything__get-env', arguments: {} });
    expect(res.isError).toBe(true);
    expect(toolError(res as never)).toMatchObject({
      code: 'TOOL_NOT_ALLOWED',
      reason: 'DENIED_BY_RULE',
      rule: 'everything:get-env',
      scope: 'ORG',
    });
    expect(textOf(res as never)).toContain('TOOL_NOT_ALLOWED');
  });

  it('should answer UNKNOWN_TOOL for a tool that does not exist', async () => {
    const res = await agent.callTool({ name: 'everything__nope', arguments: {} });
    expect(toolError(res as never)?.code).toBe('UNKNOWN_TOOL');
  });

  it('should release the reservation and charge nothing when the upstream fails', async () => {
    await flaky.close();
    const res = await agent.callTool({ name: 'flaky__ping', arguments: {} });
    expect(res.isError).toBe(true);
    const err = toolError(res as never)!;
    expect(err.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(err.charged).toBe(false);
    const meta = callMeta(res as never)!;
    expect(meta.costMicros).toBe(0);
    const budget = (res._meta as any)['tollgate/budget'];
    expect(budget.remainingMicros).toBe(PRICE_PER_ECHO * CALLS_ALLOWED + 100_000);
    expect(budget.budgets[0]).toMatchObject({ spentMicros: 0 });
    await drainLedger([meta.callId]);
    const row = await db.usageEvent.findFirstOrThrow({ where: { id: meta.callId } });
    expect(row.outcome).toBe('UPSTREAM_ERROR');
    expect(row.costMicros).toBe(0n);
  });

  it('should charge each call, report cost and remaining budget, and refuse at the exact call the budget runs out', async () => {
    const callIds: string[] = [];
    for (let i = 1; i <= CALLS_ALLOWED; i++) {
      const res = await agent.callTool({ name: 'everything__echo', arguments: { message: `hello ${i}` } });
      expect(res.isError ?? false).toBe(false);
      expect(textOf(res as never)).toBe(`Echo: hello ${i}`);
      const meta = callMeta(res as never)!;
      expect(meta.costMicros).toBe(PRICE_PER_ECHO);
      callIds.push(meta.callId);
      expect((res._meta as any)['tollgate/budget'].remainingMicros).toBe(
        PRICE_PER_ECHO * (CALLS_ALLOWED - i) + 100_000,
      );
    }
    const refused = await agent.callTool({ name: 'everything__echo', arguments: { message: 'one too many' } });
    expect(refused.isError).toBe(true);
    const err = toolError(refused as never)!;
    expect(err).toMatchObject({
      code: 'BUDGET_EXCEEDED',
      scope: 'KEY',
      period: 'MONTH',
      limitMicros: PRICE_PER_ECHO * CALLS_ALLOWED + 100_000,
      spentMicros: PRICE_PER_ECHO * CALLS_ALLOWED,
      requestedMicros: PRICE_PER_ECHO,
    });
    expect(new Date(err.resetsAt as string).getTime()).toBeGreaterThan(Date.now());

    // The ledger holds exactly one row per call that ran, none for the refused one.
    await drainLedger(callIds);
    const rows = await ledgerRows();
    const echoRows = rows.filter((r) => r.toolName === 'echo');
    expect(echoRows.map((r) => r.id).sort()).toEqual([...callIds].sort());
    expect(echoRows.every((r) => r.costMicros === BigInt(PRICE_PER_ECHO) && r.outcome === 'OK')).toBe(true);
  });

  it('should write one ledger row when the same usage event is delivered twice', async () => {
    const before = await ledgerRows();
    const original = before[0];
    // Re-deliver the first event through the usage outbox, as an edge would: the ledger must ignore it.
    const redis = new Redis(p.env.redisUrl);
    try {
      await redis.xadd(usageOutboxKeys(p.env.redisPrefix).events, '*', ...usageEntryFields(original));
    } finally {
      await redis.quit();
    }
    await drainLedger([original.id]);
    expect(await ledgerRows()).toEqual(before);
  });

  async function challengeFor(auth: string | undefined): Promise<{ status: number; challenge: string | null }> {
    const res = await fetch(`${p.edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        ...(auth ? { Authorization: auth } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    return { status: res.status, challenge: res.headers.get('www-authenticate') };
  }

  it('should answer 401 pointing at OAuth discovery when no credential or an OAuth token is refused', async () => {
    for (const auth of [undefined, 'Bearer not-a-tollgate-token']) {
      const { status, challenge } = await challengeFor(auth);
      expect(status).toBe(401);
      expect(challenge).toMatch(
        /^Bearer realm="tollgate", resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp", scope="mcp"/,
      );
    }
  });

  // A client holding a `tg_` key that discovery pointed at OAuth would start a browser sign-in that cannot help.
  it('should answer 401 invalid_token naming the key unknown or revoked, without OAuth discovery, for a bad tg_ key', async () => {
    for (const auth of ['Bearer tg_not-a-real-key', `Bearer tg_${'x'.repeat(40)}`]) {
      const { status, challenge } = await challengeFor(auth);
      expect(status).toBe(401);
      expect(challenge).toMatch(
        /^Bearer realm="tollgate", error="invalid_token", error_description="[^"]*unknown or revoked/,
      );
      expect(challenge).not.toMatch(/resource_metadata|scope=/);
    }
  });

  it('should answer a JSON-RPC parse error for malformed protocol input', async () => {
    const res = await fetch(`${p.edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${keySecret}`,
      },
      body: '{"jsonrpc": "2.0", "id": 1, "method": ',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });

  it('should stop a revoked key on the next call', async () => {
    const other = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
      teamId: (await p.admin('GET', `/v1/orgs/${orgId}/teams`)).body[0].id,
      userId: (await p.admin('GET', `/v1/orgs/${orgId}/users`)).body[0].id,
      name: 'short-lived',
    });
    const client = await connectAgent(p.edgeUrl, other.body.secret);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    expect((await p.admin('POST', `/v1/orgs/${orgId}/keys/${other.body.key.id}/revoke`)).status).toBe(200);
    await expect(client.listTools()).rejects.toThrow(/401|Invalid virtual key|Unauthorized/);
    await client.close();
    const { status, challenge } = await challengeFor(`Bearer ${other.body.secret}`);
    expect(status).toBe(401);
    expect(challenge).toMatch(/error="invalid_token", error_description="[^"]*unknown or revoked/);
    expect(challenge).not.toContain('resource_metadata');
  });

  it('should never write a virtual key or admin token to the logs', async () => {
    const output = logged.join('');
    expect(output.length).toBeGreaterThan(1000);
    expect(output).not.toContain(keySecret);
    expect(output).not.toContain(keySecret.slice(10));
    expect(output).not.toContain(p.adminToken);
  });
});
