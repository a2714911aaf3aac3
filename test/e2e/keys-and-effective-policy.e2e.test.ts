import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { KEY_REVOKED_CHANNEL } from '@tollgate/identity';
import { QueueName } from '@tollgate/queue';
import { callMeta, connectAgent, TestClock, toolError, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

const PING_PER_CALL = 5_000;
const PING_PER_TOKEN = 2;
const DEFAULT_PER_CALL = 1_000;
const REPORTED_CAP = 40_000;

interface EffectiveTool {
  exposedName: string;
  visible: boolean;
  callable: boolean;
  autoExecute: boolean;
  price: {
    ruleId: string | null;
    upstreamId: string | null;
    toolPattern: string;
    perCallMicros: number;
    perOutputTokenMicros: number;
    reportedCostCapMicros: number;
  } | null;
  rateLimits: {
    ruleId: string;
    scope: string;
    toolPattern: string;
    callsPerWindow: number | null;
    windowSeconds: number;
    maxConcurrent: number | null;
  }[];
  refusal: {
    reason: string;
    scope: string | null;
    scopeId: string | null;
    rule: string | null;
    message: string;
  } | null;
}

interface Standing {
  budgetId: string;
  scope: string;
  scopeId: string;
  limitMicros: number;
  spentMicros: number;
  reservedMicros: number;
  remainingMicros: number;
  resetsAt: string | null;
}

describe('keys: effective policy, rotation, expiry, last use', () => {
  const clock = new TestClock();
  let p: RunningPlatform;
  let db: PrismaClient;
  let redis: Redis;
  let fixture: FixtureServer;
  let orgId: string;
  let teamId: string;
  let userId: string;
  let keyId: string;
  let secret: string;
  let upstreamId: string;
  let pingRuleId: string;
  let defaultRuleId: string;
  let keyLimitId: string;
  let teamLimitId: string;
  const budgetLimits = { KEY: 1_000_000, USER: 2_000_000, TEAM: 3_000_000, ORG: 4_000_000 } as const;
  const agents: Client[] = [];

  const effective = async (token?: string) =>
    p.admin('GET', `/v1/orgs/${orgId}/keys/${keyId}/effective-policy`, undefined, token);
  const toolOf = (body: { tools: EffectiveTool[] }, name: string) => body.tools.find((t) => t.exposedName === name)!;

  /** The edge's HTTP status for an `initialize` with this secret. */
  async function edgeStatus(withSecret: string): Promise<number> {
    const res = await fetch(`${p.edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${withSecret}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
      }),
    });
    await res.text();
    return res.status;
  }

  /** Polls until the edge answers `status` for this secret (at most `withinMs`). */
  async function expectEdgeStatus(withSecret: string, status: number, withinMs = 1_000): Promise<void> {
    const deadline = Date.now() + withinMs;
    let last = await edgeStatus(withSecret);
    while (last !== status && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      last = await edgeStatus(withSecret);
    }
    expect(last).toBe(status);
  }

  async function connect(withSecret: string): Promise<Client> {
    const agent = await connectAgent(p.edgeUrl, withSecret);
    agents.push(agent);
    return agent;
  }

  async function newKey(name: string, extra: Record<string, unknown> = {}) {
    const res = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name, ...extra });
    expect(res.status).toBe(201);
    return res.body as { key: { id: string; prefix: string; lastUsedAt: string | null }; secret: string };
  }

  beforeAll(async () => {
    p = await startPlatform({}, { clock });
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    redis = new Redis(p.env.redisUrl);
    fixture = await startFixtureServer();

    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Keyco', slug: 'keyco' })).body.id;
    teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'agents' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'kim@keyco.test' })).body.id;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId })).status).toBe(201);
    const issued = await newKey('agent');
    keyId = issued.key.id;
    secret = issued.secret;
    expect(issued.key.lastUsedAt).toBeNull();

    upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'fixture',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    expect(sync.status).toBe(202);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);

    // The org allows the whole fixture; the team narrows it (huge and big-image left out); the key denies fail.
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
          allow: ['fixture:*'],
          deny: [],
          autoExecute: ['fixture:ping'],
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/policies/TEAM/${teamId}`, {
          allow: ['fixture:ping', 'fixture:slow', 'fixture:reported-cost', 'fixture:fail'],
          deny: [],
        })
      ).status,
    ).toBe(200);
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/policies/KEY/${keyId}`, { allow: [], deny: ['fixture:fail'] })).status,
    ).toBe(200);

    // An org-wide default price, a more specific upstream rule for ping, a reported-cost rule.
    defaultRuleId = (
      await p.admin('POST', `/v1/orgs/${orgId}/prices`, { toolPattern: '*', perCallMicros: DEFAULT_PER_CALL })
    ).body.id;
    pingRuleId = (
      await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
        upstreamId,
        toolPattern: 'ping',
        perCallMicros: PING_PER_CALL,
        perOutputTokenMicros: PING_PER_TOKEN,
      })
    ).body.id;
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId,
          toolPattern: 'reported-cost',
          perCallMicros: 0,
          acceptReportedCost: true,
          reportedCostCapMicros: REPORTED_CAP,
        })
      ).status,
    ).toBe(201);

    keyLimitId = (
      await p.admin('POST', `/v1/orgs/${orgId}/rate-limits`, {
        scope: 'KEY',
        scopeId: keyId,
        toolPattern: 'fixture:ping',
        callsPerWindow: 100,
        windowSeconds: 60,
      })
    ).body.id;
    teamLimitId = (
      await p.admin('POST', `/v1/orgs/${orgId}/rate-limits`, {
        scope: 'TEAM',
        scopeId: teamId,
        toolPattern: 'fixture:*',
        maxConcurrent: 5,
      })
    ).body.id;

    const scopeIds = { KEY: keyId, USER: userId, TEAM: teamId, ORG: orgId } as const;
    for (const scope of ['KEY', 'USER', 'TEAM', 'ORG'] as const) {
      expect(
        (
          await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
            scope,
            scopeId: scopeIds[scope],
            period: 'MONTH',
            limitMicros: budgetLimits[scope],
          })
        ).status,
      ).toBe(200);
    }
  });

  afterAll(async () => {
    await Promise.allSettled(agents.map((a) => a.close()));
    await db?.$disconnect();
    redis?.disconnect();
    await fixture?.close();
    await p?.close();
  });

  describe('effective policy', () => {
    it('should list allowed tools with the price and the rate limits in force, as the edge lists them', async () => {
      const res = await effective();
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        key: { id: keyId },
        keyStatus: 'ACTIVE',
        allowedTools: 3,
        refusedTools: 3,
        disclosure: { keyMode: null, requestedMode: 'AUTO', mode: 'FULL' },
      });
      expect(res.body.policies.map((l: { scope: string }) => l.scope).sort()).toEqual(['KEY', 'ORG', 'TEAM']);

      const ping = toolOf(res.body, 'fixture__ping');
      expect(ping).toMatchObject({ visible: true, callable: true, autoExecute: true, refusal: null });
      expect(ping.price).toMatchObject({
        ruleId: pingRuleId,
        upstreamId,
        toolPattern: 'ping',
        perCallMicros: PING_PER_CALL,
        perOutputTokenMicros: PING_PER_TOKEN,
        reportedCostCapMicros: 0,
      });
      expect(ping.rateLimits.map((r) => r.ruleId).sort()).toEqual([keyLimitId, teamLimitId].sort());
      expect(ping.rateLimits.find((r) => r.ruleId === keyLimitId)).toMatchObject({
        scope: 'KEY',
        toolPattern: 'fixture:ping',
        callsPerWindow: 100,
        windowSeconds: 60,
        maxConcurrent: null,
      });
      expect(ping.rateLimits.find((r) => r.ruleId === teamLimitId)).toMatchObject({
        scope: 'TEAM',
        toolPattern: 'fixture:*',
        callsPerWindow: null,
        maxConcurrent: 5,
      });

      const slow = toolOf(res.body, 'fixture__slow');
      expect(slow).toMatchObject({ callable: true, autoExecute: false });
      expect(slow.price).toMatchObject({
        ruleId: defaultRuleId,
        upstreamId: null,
        toolPattern: '*',
        perCallMicros: DEFAULT_PER_CALL,
      });
      expect(slow.rateLimits.map((r) => r.ruleId)).toEqual([teamLimitId]);

      expect(toolOf(res.body, 'fixture__reported-cost').price).toMatchObject({
        perCallMicros: 0,
        reportedCostCapMicros: REPORTED_CAP,
      });

      // What the edge lists to this key is exactly the callable tools of the view.
      const agent = await connect(secret);
      const listed = (await agent.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('fixture__'));
      const callable = (res.body.tools as EffectiveTool[]).filter((t) => t.callable).map((t) => t.exposedName);
      expect(listed.sort()).toEqual(callable.sort());
      // Every tool of the served catalog is in the view.
      expect((res.body.tools as EffectiveTool[]).map((t) => t.exposedName).sort()).toEqual(
        [
          'fixture__big-image',
          'fixture__fail',
          'fixture__huge',
          'fixture__ping',
          'fixture__reported-cost',
          'fixture__slow',
        ].sort(),
      );
    });

    it('should name the rule that refuses each refused tool, as the edge refuses it', async () => {
      const res = await effective();
      const fail = toolOf(res.body, 'fixture__fail');
      expect(fail).toMatchObject({ visible: false, callable: false, price: null, rateLimits: [] });
      expect(fail.refusal).toMatchObject({
        reason: 'DENIED_BY_RULE',
        scope: 'KEY',
        scopeId: keyId,
        rule: 'fixture:fail',
      });
      for (const name of ['fixture__huge', 'fixture__big-image']) {
        expect(toolOf(res.body, name).refusal).toEqual({
          reason: 'NOT_IN_ALLOW_LIST',
          scope: 'TEAM',
          scopeId: teamId,
          rule: null,
          message: "not in the team policy's allow list",
        });
      }

      // The edge refuses the same calls for the same reasons.
      const agent = await connect(secret);
      const denied = toolError((await agent.callTool({ name: 'fixture__fail', arguments: {} })) as never);
      expect(denied).toMatchObject({
        code: 'TOOL_NOT_ALLOWED',
        reason: 'DENIED_BY_RULE',
        scope: 'KEY',
        rule: 'fixture:fail',
      });
      const left = toolError((await agent.callTool({ name: 'fixture__huge', arguments: {} })) as never);
      expect(left).toMatchObject({ code: 'TOOL_NOT_ALLOWED', reason: 'NOT_IN_ALLOW_LIST', scope: 'TEAM' });
    });

    it('should show every budget level with its standing after a charged call', async () => {
      const before = (await effective()).body.budgets as Standing[];
      expect(before.map((b) => b.scope)).toEqual(['KEY', 'USER', 'TEAM', 'ORG']);
      for (const b of before)
        expect(b).toMatchObject({
          limitMicros: budgetLimits[b.scope as keyof typeof budgetLimits],
          spentMicros: 0,
          reservedMicros: 0,
        });

      const agent = await connect(secret);
      const result = await agent.callTool({ name: 'fixture__ping', arguments: {} });
      expect(result.isError ?? false).toBe(false);
      const meta = callMeta(result as never)!;
      expect(meta.costMicros).toBe(PING_PER_CALL + PING_PER_TOKEN * meta.outputTokens);

      const after = (await effective()).body.budgets as Standing[];
      for (const b of after) {
        const limit = budgetLimits[b.scope as keyof typeof budgetLimits];
        expect(b).toMatchObject({
          spentMicros: meta.costMicros,
          reservedMicros: 0,
          remainingMicros: limit - meta.costMicros,
        });
        expect(b.resetsAt).not.toBeNull();
        expect(new Date(b.resetsAt!).getTime()).toBeGreaterThan(Date.now());
      }
      // The same figures the edge handed the agent.
      const edgeBudgets = (result._meta?.['tollgate/budget'] as { budgets: { scope: string; spentMicros: number }[] })
        .budgets;
      expect(edgeBudgets.map((b) => [b.scope, b.spentMicros])).toEqual(after.map((b) => [b.scope, b.spentMicros]));
      await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [meta.callId]);
    });

    it('should follow a policy change at once', async () => {
      expect(
        (
          await p.admin('PUT', `/v1/orgs/${orgId}/policies/KEY/${keyId}`, {
            allow: [],
            deny: ['fixture:fail', 'fixture:slow'],
          })
        ).status,
      ).toBe(200);
      expect(toolOf((await effective()).body, 'fixture__slow').refusal).toMatchObject({
        reason: 'DENIED_BY_RULE',
        scope: 'KEY',
        rule: 'fixture:slow',
      });
      expect(
        (await p.admin('PUT', `/v1/orgs/${orgId}/policies/KEY/${keyId}`, { allow: [], deny: ['fixture:fail'] })).status,
      ).toBe(200);
      expect(toolOf((await effective()).body, 'fixture__slow').callable).toBe(true);
    });

    it('should answer 404 for an unknown key', async () => {
      const res = await p.admin('GET', `/v1/orgs/${orgId}/keys/00000000-0000-4000-8000-000000000000/effective-policy`);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('KEY_NOT_FOUND');
    });
  });

  describe('last use', () => {
    it('should record lastUsedAt after a call', async () => {
      // The key was used by the tests above; the edge writes lastUsedAt without holding the call up.
      const deadline = Date.now() + 5_000;
      let lastUsedAt: string | null = null;
      while (!lastUsedAt && Date.now() < deadline) {
        lastUsedAt = (await p.admin('GET', `/v1/orgs/${orgId}/keys/${keyId}`)).body.lastUsedAt;
        if (!lastUsedAt) await new Promise((r) => setTimeout(r, 50));
      }
      expect(lastUsedAt).not.toBeNull();
      expect(Date.now() - new Date(lastUsedAt!).getTime()).toBeLessThan(60_000);
    });
  });

  describe('rotation', () => {
    it('should issue a new secret for the same key; the old one gets 401 at once, spend and ledger carry over', async () => {
      const spentBefore = ((await effective()).body.budgets as Standing[]).find((b) => b.scope === 'KEY')!.spentMicros;
      expect(spentBefore).toBeGreaterThan(0);
      const prefixBefore = (await p.admin('GET', `/v1/orgs/${orgId}/keys/${keyId}`)).body.prefix;
      const oldAgent = await connect(secret);
      const oldCall = await oldAgent.callTool({ name: 'fixture__ping', arguments: {} });
      expect(oldCall.isError ?? false).toBe(false);
      const oldCost = callMeta(oldCall as never)!.costMicros;
      await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callMeta(oldCall as never)!.callId]);
      const ledgerBefore = await db.usageEvent.count({ where: { keyId } });

      const rotated = await p.admin('POST', `/v1/orgs/${orgId}/keys/${keyId}/rotate`);
      expect(rotated.status).toBe(200);
      expect(rotated.body.key).toMatchObject({ id: keyId, teamId, userId, name: 'agent', revokedAt: null });
      expect(rotated.body.secret).toMatch(/^tg_[0-9A-Za-z]{40}$/);
      expect(rotated.body.secret).not.toBe(secret);
      expect(rotated.body.secret.startsWith(rotated.body.key.prefix)).toBe(true);
      expect(rotated.body.key.prefix).not.toBe(prefixBefore);
      expect(JSON.stringify(rotated.body.key)).not.toContain(rotated.body.secret);

      // The old secret is dropped by every edge: the agent that was cached a moment ago is refused.
      await expectEdgeStatus(secret, 401);
      await expect(oldAgent.callTool({ name: 'fixture__ping', arguments: {} })).rejects.toThrow(
        /401|Unauthorized|Invalid/,
      );

      const oldSecret = secret;
      secret = rotated.body.secret;
      const agent = await connect(secret);
      const result = await agent.callTool({ name: 'fixture__ping', arguments: {} });
      expect(result.isError ?? false).toBe(false);
      const meta = callMeta(result as never)!;

      // Same budgets: what was spent under the old secret still counts.
      const keyBudget = ((await effective()).body.budgets as Standing[]).find((b) => b.scope === 'KEY')!;
      expect(keyBudget.spentMicros).toBe(spentBefore + oldCost + meta.costMicros);
      const edgeKeyBudget = (
        result._meta?.['tollgate/budget'] as { budgets: { scope: string; spentMicros: number }[] }
      ).budgets.find((b) => b.scope === 'KEY')!;
      expect(edgeKeyBudget.spentMicros).toBe(keyBudget.spentMicros);

      // Same ledger: rows before and after the rotation share the key id.
      await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [meta.callId]);
      const rows = await db.usageEvent.findMany({ where: { keyId } });
      expect(rows.length).toBe(ledgerBefore + 1);
      expect(rows.some((r) => r.id === meta.callId)).toBe(true);
      const ledgerSum = rows.reduce((s, r) => s + Number(r.costMicros), 0);
      expect(keyBudget.spentMicros).toBe(ledgerSum);

      // Audited, without the secret.
      const audit = await p.admin('GET', `/v1/orgs/${orgId}/audit?limit=20`);
      const row = (audit.body as { action: string; targetId: string; details: Record<string, unknown> }[]).find(
        (e) => e.action === 'key.rotated',
      );
      expect(row).toMatchObject({
        targetId: keyId,
        details: { previousPrefix: prefixBefore, prefix: rotated.body.key.prefix },
      });
      expect(JSON.stringify(audit.body)).not.toContain(secret);
      expect(JSON.stringify(audit.body)).not.toContain(oldSecret);
      expect(await edgeStatus(oldSecret)).toBe(401);
    });

    it('should refuse to rotate a revoked key with 409 KEY_REVOKED, and an unknown key with 404', async () => {
      const other = await newKey('to-revoke');
      expect((await p.admin('POST', `/v1/orgs/${orgId}/keys/${other.key.id}/revoke`)).status).toBe(200);
      const res = await p.admin('POST', `/v1/orgs/${orgId}/keys/${other.key.id}/rotate`);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'KEY_REVOKED', field: 'keyId' });
      expect(res.body.secret).toBeUndefined();
      await expectEdgeStatus(other.secret, 401);
      expect((await p.admin('GET', `/v1/orgs/${orgId}/keys/${other.key.id}/effective-policy`)).body).toMatchObject({
        keyStatus: 'REVOKED',
        allowedTools: 0,
      });
      expect((await p.admin('POST', `/v1/orgs/${orgId}/keys/00000000-0000-4000-8000-000000000000/rotate`)).status).toBe(
        404,
      );
    });
  });

  describe('expiry', () => {
    it('should refuse to create a key that expires in the past, naming the field', async () => {
      const res = await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
        teamId,
        userId,
        name: 'stale',
        expiresAt: new Date(Date.now() - 60_000).toISOString(),
      });
      expect(res.status).toBe(400);
      expect(res.body.field).toBe('expiresAt');
    });

    it('should answer 401 for a key whose expiry has passed, even while the edge has it cached', async () => {
      const short = await newKey('short', { expiresAt: new Date(Date.now() + 60_000).toISOString() });
      const agent = await connect(short.secret);
      expect((await agent.callTool({ name: 'fixture__ping', arguments: {} })).isError ?? false).toBe(false);
      // No cache drop here: the resolver checks the cached expiry on every request. The edge's
      // clock is moved to the expiry rather than waited for: served 1 ms before it, refused at it.
      const expiresAt = new Date(
        (await p.admin('GET', `/v1/orgs/${orgId}/keys/${short.key.id}`)).body.expiresAt,
      ).getTime();
      try {
        clock.freeze(expiresAt - 1);
        expect(await edgeStatus(short.secret)).toBe(200);
        clock.advance(1);
        expect(await edgeStatus(short.secret)).toBe(401);
      } finally {
        clock.resume();
      }
    });

    it('should answer 401 once a key’s expiry is moved into the past, and show it as expired', async () => {
      const later = await newKey('later', { expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
      const agent = await connect(later.secret);
      expect((await agent.callTool({ name: 'fixture__ping', arguments: {} })).isError ?? false).toBe(false);
      await db.virtualKey.update({ where: { id: later.key.id }, data: { expiresAt: new Date(Date.now() - 1_000) } });
      await redis.publish(`${p.env.redisPrefix}:ch:${KEY_REVOKED_CHANNEL}`, later.key.id);
      await expectEdgeStatus(later.secret, 401);
      const view = await p.admin('GET', `/v1/orgs/${orgId}/keys/${later.key.id}/effective-policy`);
      expect(view.body).toMatchObject({ keyStatus: 'EXPIRED', allowedTools: 0 });
      expect((view.body.tools as EffectiveTool[]).every((t) => t.refusal?.reason === 'KEY_EXPIRED')).toBe(true);
    });
  });

  describe('tenant isolation', () => {
    it('should answer 404 with no data to another org’s admin on both routes, and change nothing', async () => {
      const otherOrgId = (await p.admin('POST', '/v1/orgs', { name: 'Otherco', slug: 'otherco' })).body.id;
      const otherAdmin = (
        await p.admin('POST', '/v1/admin-tokens', { role: 'ORG_ADMIN', orgId: otherOrgId, name: 'otherco-admin' })
      ).body.secret;
      const prefix = (await p.admin('GET', `/v1/orgs/${orgId}/keys/${keyId}`)).body.prefix;

      const view = await effective(otherAdmin);
      const rotate = await p.admin('POST', `/v1/orgs/${orgId}/keys/${keyId}/rotate`, undefined, otherAdmin);
      for (const res of [view, rotate]) {
        expect(res.status).toBe(404);
        const text = JSON.stringify(res.body);
        for (const leak of ['Keyco', 'kim@keyco.test', keyId, 'fixture__', 'tg_']) expect(text).not.toContain(leak);
      }
      // The org's own id in the path is echoed back as "not found", nothing more; the key still works.
      expect((await p.admin('GET', `/v1/orgs/${orgId}/keys/${keyId}`)).body.prefix).toBe(prefix);
      expect(await edgeStatus(secret)).toBe(200);
    });
  });

  describe('roles on keys', () => {
    const UNKNOWN_KEY = '00000000-0000-4000-8000-000000000000';
    // Lee, a second member of kim's team; Max, in another team (ops) that has its own team admin.
    let leeId: string;
    let maxId: string;
    let opsTeamId: string;
    let leeKey: { id: string; secret: string };
    let maxKey: { id: string; secret: string };
    let member: string;
    let memberTokenId: string;
    let teamAdmin: string;
    let teamAdminTokenId: string;
    let finance: string;

    const keyIdsOf = (body: { id: string }[]) => body.map((k) => k.id).sort();
    const auditRow = async (action: string, targetId: string) =>
      (
        (await p.admin('GET', `/v1/orgs/${orgId}/audit?limit=500`)).body as {
          action: string;
          actorId: string;
          targetId: string;
          details: Record<string, unknown>;
        }[]
      ).find((e) => e.action === action && e.targetId === targetId);

    beforeAll(async () => {
      leeId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'lee@keyco.test' })).body.id;
      maxId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'max@keyco.test' })).body.id;
      opsTeamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'ops' })).body.id;
      expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId: leeId })).status).toBe(201);
      expect(
        (await p.admin('POST', `/v1/orgs/${orgId}/teams/${opsTeamId}/members`, { userId: maxId, isTeamAdmin: true }))
          .status,
      ).toBe(201);
      const lee = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId: leeId, name: 'lee-laptop' });
      const max = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId: opsTeamId, userId: maxId, name: 'max-ci' });
      leeKey = { id: lee.body.key.id, secret: lee.body.secret };
      maxKey = { id: max.body.key.id, secret: max.body.secret };

      const memberToken = await p.admin('POST', '/v1/admin-tokens', {
        role: 'MEMBER',
        orgId,
        userId: leeId,
        name: 'lee',
      });
      const teamAdminToken = await p.admin('POST', '/v1/admin-tokens', {
        role: 'TEAM_ADMIN',
        orgId,
        teamId: opsTeamId,
        userId: maxId,
        name: 'ops-admin',
      });
      const financeToken = await p.admin('POST', '/v1/admin-tokens', { role: 'FINANCE', orgId, name: 'books' });
      for (const res of [memberToken, teamAdminToken, financeToken]) expect(res.status).toBe(201);
      [member, memberTokenId] = [memberToken.body.secret, memberToken.body.id];
      [teamAdmin, teamAdminTokenId] = [teamAdminToken.body.secret, teamAdminToken.body.id];
      finance = financeToken.body.secret;
    });

    it('should list to a member only its own keys, and to a team admin only its team’s', async () => {
      const mine = await p.admin('GET', `/v1/orgs/${orgId}/keys`, undefined, member);
      expect(mine.status).toBe(200);
      expect(keyIdsOf(mine.body)).toEqual([leeKey.id]);
      expect(JSON.stringify(mine.body)).not.toContain(keyId);

      const team = await p.admin('GET', `/v1/orgs/${orgId}/keys`, undefined, teamAdmin);
      expect(team.status).toBe(200);
      expect(keyIdsOf(team.body)).toEqual([maxKey.id]);

      // Finance reads every key (it reads spend by key) and the org admin too.
      const all = keyIdsOf((await p.admin('GET', `/v1/orgs/${orgId}/keys`)).body);
      expect(all).toEqual(expect.arrayContaining([keyId, leeKey.id, maxKey.id]));
      expect(keyIdsOf((await p.admin('GET', `/v1/orgs/${orgId}/keys`, undefined, finance)).body)).toEqual(all);
    });

    it('should answer 404, as for an unknown key, when a member or team admin reaches for a key that is not theirs, and change nothing', async () => {
      const prefixBefore = (await p.admin('GET', `/v1/orgs/${orgId}/keys/${keyId}`)).body.prefix;
      const unknown = await p.admin('GET', `/v1/orgs/${orgId}/keys/${UNKNOWN_KEY}`, undefined, member);
      expect(unknown.status).toBe(404);
      for (const [token, foreignKey] of [
        [member, keyId],
        [member, maxKey.id],
        [teamAdmin, keyId],
        [teamAdmin, leeKey.id],
      ] as const) {
        for (const [method, path] of [
          ['GET', ''],
          ['GET', '/effective-policy'],
          ['GET', '/preview'],
          ['POST', '/rotate'],
          ['POST', '/revoke'],
        ] as const) {
          const res = await p.admin(method, `/v1/orgs/${orgId}/keys/${foreignKey}${path}`, undefined, token);
          expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
          // Exactly what an unknown key answers, but for the id: nothing of the key leaks.
          expect(res.body).toMatchObject({
            code: 'KEY_NOT_FOUND',
            field: 'keyId',
            message: `key ${foreignKey} not found`,
          });
          expect(Object.keys(res.body).sort()).toEqual(Object.keys(unknown.body).sort());
          for (const leak of ['tg_', 'kim@keyco.test', 'max@keyco.test', 'fixture__'])
            expect(JSON.stringify(res.body)).not.toContain(leak);
        }
      }
      // Kim's key is untouched and still works at the edge; so is Max's.
      const kim = (await p.admin('GET', `/v1/orgs/${orgId}/keys/${keyId}`)).body;
      expect(kim).toMatchObject({ prefix: prefixBefore, revokedAt: null });
      expect(await edgeStatus(secret)).toBe(200);
      expect(await edgeStatus(maxKey.secret)).toBe(200);
    });

    it('should let a member read its own key and its effective policy', async () => {
      expect((await p.admin('GET', `/v1/orgs/${orgId}/keys/${leeKey.id}`, undefined, member)).body).toMatchObject({
        id: leeKey.id,
        userId: leeId,
      });
      const view = await p.admin('GET', `/v1/orgs/${orgId}/keys/${leeKey.id}/effective-policy`, undefined, member);
      expect(view.status).toBe(200);
      expect(view.body).toMatchObject({ key: { id: leeKey.id }, keyStatus: 'ACTIVE' });
      expect((await p.admin('GET', `/v1/orgs/${orgId}/keys/${leeKey.id}/preview`, undefined, member)).status).toBe(200);
    });

    it('should let a member create a key only for itself, in a team it belongs to', async () => {
      const forKim = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'sneaky' }, member);
      expect(forKim.status).toBe(403);
      expect(forKim.body.message).toMatch(/only create keys for its own user/);
      expect(forKim.body.secret).toBeUndefined();
      const outsideTeam = await p.admin(
        'POST',
        `/v1/orgs/${orgId}/keys`,
        { teamId: opsTeamId, userId: leeId, name: 'ops' },
        member,
      );
      expect(outsideTeam.status).toBe(400);
      expect(outsideTeam.body).toMatchObject({ code: 'NOT_A_TEAM_MEMBER', field: 'userId' });

      const own = await p.admin(
        'POST',
        `/v1/orgs/${orgId}/keys`,
        { teamId, userId: leeId, name: 'lee-desktop' },
        member,
      );
      expect(own.status).toBe(201);
      expect(own.body.key).toMatchObject({ teamId, userId: leeId, name: 'lee-desktop' });
      expect(await edgeStatus(own.body.secret)).toBe(200);
      expect(keyIdsOf((await p.admin('GET', `/v1/orgs/${orgId}/keys`, undefined, member)).body)).toEqual(
        [leeKey.id, own.body.key.id].sort(),
      );
      expect(await auditRow('key.created', own.body.key.id)).toMatchObject({
        actorId: memberTokenId,
        details: { userId: leeId, teamId },
      });
      // Nobody else got a key from this.
      expect((await db.virtualKey.findMany({ where: { orgId, name: 'sneaky' } })).length).toBe(0);
    });

    it('should let a member rotate and revoke its own key; the old secret, then the key, stop working at the edge', async () => {
      const rotated = await p.admin('POST', `/v1/orgs/${orgId}/keys/${leeKey.id}/rotate`, undefined, member);
      expect(rotated.status).toBe(200);
      expect(rotated.body.key).toMatchObject({ id: leeKey.id, userId: leeId });
      await expectEdgeStatus(leeKey.secret, 401);
      expect(await edgeStatus(rotated.body.secret)).toBe(200);
      expect(await auditRow('key.rotated', leeKey.id)).toMatchObject({ actorId: memberTokenId });

      const revoked = await p.admin('POST', `/v1/orgs/${orgId}/keys/${leeKey.id}/revoke`, undefined, member);
      expect(revoked.status).toBe(200);
      expect(revoked.body.revokedAt).not.toBeNull();
      await expectEdgeStatus(rotated.body.secret, 401);
      expect(await auditRow('key.revoked', leeKey.id)).toMatchObject({ actorId: memberTokenId });
      // Kim's key, in the same team, still works.
      expect(await edgeStatus(secret)).toBe(200);
    });

    it('should let a team admin create, rotate and revoke keys in its team only', async () => {
      const inKimsTeam = await p.admin(
        'POST',
        `/v1/orgs/${orgId}/keys`,
        { teamId, userId, name: 'not-mine' },
        teamAdmin,
      );
      expect(inKimsTeam.status).toBe(403);
      expect(inKimsTeam.body.message).toMatch(/only create keys in its own team/);

      const created = await p.admin(
        'POST',
        `/v1/orgs/${orgId}/keys`,
        { teamId: opsTeamId, userId: maxId, name: 'max-laptop' },
        teamAdmin,
      );
      expect(created.status).toBe(201);
      expect(await auditRow('key.created', created.body.key.id)).toMatchObject({ actorId: teamAdminTokenId });

      const rotated = await p.admin('POST', `/v1/orgs/${orgId}/keys/${maxKey.id}/rotate`, undefined, teamAdmin);
      expect(rotated.status).toBe(200);
      await expectEdgeStatus(maxKey.secret, 401);
      expect(
        (await p.admin('POST', `/v1/orgs/${orgId}/keys/${created.body.key.id}/revoke`, undefined, teamAdmin)).status,
      ).toBe(200);
      await expectEdgeStatus(created.body.secret, 401);
      expect(await auditRow('key.revoked', created.body.key.id)).toMatchObject({ actorId: teamAdminTokenId });
      expect(keyIdsOf((await p.admin('GET', `/v1/orgs/${orgId}/keys`, undefined, teamAdmin)).body)).toEqual(
        [maxKey.id, created.body.key.id].sort(),
      );
    });

    it('should refuse finance any key change with 403, and change nothing', async () => {
      const prefixBefore = (await p.admin('GET', `/v1/orgs/${orgId}/keys/${keyId}`)).body.prefix;
      expect((await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'books' }, finance)).status).toBe(
        403,
      );
      for (const action of ['rotate', 'revoke']) {
        const res = await p.admin('POST', `/v1/orgs/${orgId}/keys/${keyId}/${action}`, undefined, finance);
        expect(res.status).toBe(403);
        expect(res.body.message).toMatch(/FINANCE may not change/);
      }
      expect(
        (await p.admin('GET', `/v1/orgs/${orgId}/keys/${keyId}/effective-policy`, undefined, finance)).status,
      ).toBe(200);
      expect((await p.admin('GET', `/v1/orgs/${orgId}/keys/${keyId}`)).body).toMatchObject({
        prefix: prefixBefore,
        revokedAt: null,
      });
      expect(await edgeStatus(secret)).toBe(200);
    });

    it('should answer 403 to a member or team admin for every change outside keys, and for spend and the audit trail', async () => {
      const writes: [string, string, unknown][] = [
        ['PUT', `/v1/orgs/${orgId}/budgets`, { scope: 'USER', scopeId: leeId, period: 'MONTH', limitMicros: 1 }],
        ['POST', `/v1/orgs/${orgId}/prices`, { toolPattern: '*', perCallMicros: 0 }],
        ['PUT', `/v1/orgs/${orgId}/policies/USER/${leeId}`, { allow: ['fixture:*'], deny: [] }],
        ['PUT', `/v1/orgs/${orgId}/policies/KEY/${keyId}`, { allow: ['fixture:*'], deny: [] }],
        ['POST', `/v1/orgs/${orgId}/upstreams`, { namespace: 'mine', transport: 'STREAMABLE_HTTP', url: fixture.url }],
        ['POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`, undefined],
        ['POST', `/v1/orgs/${orgId}/users`, { email: 'new@keyco.test' }],
        ['POST', `/v1/orgs/${orgId}/teams`, { name: 'mine' }],
        ['POST', `/v1/orgs/${orgId}/teams/${opsTeamId}/members`, { userId: leeId }],
        [
          'POST',
          `/v1/orgs/${orgId}/rate-limits`,
          { scope: 'USER', scopeId: leeId, toolPattern: '*', callsPerWindow: 1000 },
        ],
        ['DELETE', `/v1/orgs/${orgId}/rate-limits/${keyLimitId}`, undefined],
        ['POST', '/v1/admin-tokens', { role: 'MEMBER', userId: leeId, name: 'more' }],
      ];
      // Reports answer them within their scope (test/e2e/report-scope.e2e.test.ts); the audit trail does not.
      const reads = [`/v1/orgs/${orgId}/audit`];
      const latestAuditId = async () => (await p.admin('GET', `/v1/orgs/${orgId}/audit?limit=1`)).body[0].id as string;
      const auditBefore = await latestAuditId();
      for (const token of [member, teamAdmin]) {
        for (const [method, path, body] of writes) {
          const res = await p.admin(method, path, body, token);
          expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
        }
        for (const path of reads)
          expect({ path, status: (await p.admin('GET', path, undefined, token)).status }).toEqual({
            path,
            status: 403,
          });
      }
      // Refused changes change nothing and write no audit row.
      expect(await latestAuditId()).toBe(auditBefore);
      expect(
        ((await p.admin('GET', `/v1/orgs/${orgId}/rate-limits`)).body as { id: string }[]).map((r) => r.id),
      ).toContain(keyLimitId);
      // What governs their calls stays readable.
      for (const path of ['policies', 'prices', 'budgets', 'rate-limits', 'tools', 'teams']) {
        expect({ path, status: (await p.admin('GET', `/v1/orgs/${orgId}/${path}`, undefined, member)).status }).toEqual(
          { path, status: 200 },
        );
      }
    });
  });
});
