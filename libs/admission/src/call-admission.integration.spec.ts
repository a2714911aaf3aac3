import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BudgetAdminService, BudgetService } from '@tollgate/budget';
import { ConfigModule, loadEdgeConfig } from '@tollgate/config';
import { DbModule, PrismaService } from '@tollgate/db';
import { RateLimitAdminService, RateLimitService } from '@tollgate/rate-limit';
import { RedisModule, RedisService } from '@tollgate/redis';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AdmissionLeases } from './admission-leases';
import { AdmissionModule } from './admission.module';
import { CallAdmissionService, CallHold } from './call-admission.service';

/** One edge's admission, as the edge wires it: its own leases and its own Redis connection. */
interface Edge {
  app: INestApplication;
  admission: CallAdmissionService;
  leases: AdmissionLeases;
  redis: RedisService;
}

describe('Call admission with leases, on real Redis and Postgres (two edges)', () => {
  let env: TestEnv;
  const edges: Edge[] = [];
  let prisma: PrismaService;
  let budgetAdmin: BudgetAdminService;
  let limitAdmin: RateLimitAdminService;
  let orgId: string;
  let caller: { orgId: string; teamId: string; userId: string; keyId: string; timeZone: string };
  const tool = { namespace: 'fixture', tool: 'echo' };

  async function startEdge(): Promise<Edge> {
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadEdgeConfig(env.vars)), DbModule, RedisModule, AdmissionModule.forSettings({ reservationTtlMs: 30_000, leases: true, leaseIdleMs: 60_000 })],
      providers: [BudgetAdminService, RateLimitAdminService],
    }).compile();
    const app = moduleRef.createNestApplication();
    await app.init();
    const edge = { app, admission: app.get(CallAdmissionService), leases: app.get(AdmissionLeases), redis: app.get(RedisService) };
    edges.push(edge);
    return edge;
  }

  /** A fresh key (so each test has its own budget counters), with a KEY budget and optionally a rate limit. */
  async function newKey(budgetMicros: bigint, limit?: { callsPerWindow?: number; maxConcurrent?: number }) {
    const user = await prisma.user.create({ data: { orgId, email: `u${Math.random()}@x` } });
    const key = await prisma.virtualKey.create({ data: { orgId, teamId: caller.teamId, userId: user.id, name: 'k', prefix: `tg_${Math.random()}`, secretHash: `h${Math.random()}` } });
    caller = { ...caller, userId: user.id, keyId: key.id };
    const { budget } = await budgetAdmin.putBudget(orgId, { scope: 'KEY', scopeId: key.id, period: 'MONTH', limitMicros: budgetMicros, mode: 'HARD' });
    const rule = limit ? await limitAdmin.createRateLimit(orgId, { scope: 'KEY', scopeId: key.id, toolPattern: 'fixture:*', windowSeconds: 3600, ...limit }) : null;
    // Every edge sees the new rules (the caches drop on the config-changed message).
    for (const e of edges) {
      await expect.poll(async () => (await e.app.get(BudgetService).budgetsFor(caller)).map((b) => b.id)).toContain(budget.id);
      if (rule) await expect.poll(async () => (await e.app.get(RateLimitService).rulesFor(caller, tool)).map((r) => r.id)).toContain(rule.id);
    }
    const counter = async () => {
      const [k] = await edges[0].redis.client.keys(`${env.redisPrefix}:{org:${orgId}}:budget:${budget.id}:*`);
      const [spent, reserved, leased] = await edges[0].redis.client.hmget(k, 'spent', 'reserved', 'leased');
      return { spent: Number(spent), reserved: Number(reserved ?? 0), leased: Number(leased ?? 0) };
    };
    const rlKeys = async () => (rule ? await edges[0].redis.client.keys(`${env.redisPrefix}:{org:${orgId}}:rl:${rule.id}:*`) : []);
    return { keyId: key.id, counter, rlKeys };
  }

  let n = 0;
  const admit = (edge: Edge, estimate: bigint) => edge.admission.admit(caller, tool, `call-${++n}`, estimate, Date.now());

  beforeAll(async () => {
    env = await createTestEnv();
    await startEdge();
    await startEdge();
    prisma = edges[0].app.get(PrismaService);
    budgetAdmin = edges[0].app.get(BudgetAdminService);
    limitAdmin = edges[0].app.get(RateLimitAdminService);
    const org = await prisma.organization.create({ data: { name: 'o', slug: 'o' } });
    const team = await prisma.team.create({ data: { orgId: org.id, name: 't' } });
    orgId = org.id;
    caller = { orgId, teamId: team.id, userId: '', keyId: '', timeZone: org.timeZone };
  });

  afterAll(async () => {
    for (const e of edges) await e.app.close().catch(() => undefined);
    await env?.cleanup();
  });

  it('should admit calls far from every limit without a round trip, charge what they cost and give the rest back on shutdown', async () => {
    const edge = await startEdge();
    const key = await newKey(1_000_000_000n, { callsPerWindow: 100_000, maxConcurrent: 1_000 });

    // The very first call finds no counter: it is checked in Redis on its own, which seeds the counter from the ledger.
    const seeding = await admit(edge, 1_000n);
    expect(seeding.ok && seeding.hold.leased).toBe(null);
    if (seeding.ok) await edge.admission.complete(seeding.hold, 700n, null);
    const first = await admit(edge, 1_000n);
    expect(first.ok && first.hold.leased).toBeTruthy();
    const afterFirst = await key.counter();
    expect(afterFirst).toMatchObject({ spent: 700, reserved: 0 });
    expect(afterFirst.leased).toBeGreaterThanOrEqual(2_000);

    // The next calls are admitted in memory: no script runs until they complete.
    const scripts = vi.spyOn(edge.redis, 'evalScript');
    const holds: CallHold[] = [first.ok ? first.hold : (undefined as never)];
    for (let i = 0; i < 5; i++) {
      const a = await admit(edge, 1_000n);
      expect(a.ok && a.hold.leased).toBeTruthy();
      if (a.ok) holds.push(a.hold);
    }
    expect(scripts).not.toHaveBeenCalled();
    expect(await key.counter()).toEqual(afterFirst);

    // Each call costs 700 of its 1,000 estimate: 4,200 more is spent, in the completion script of
    // that turn (no script of its own).
    const standings = await Promise.all(holds.map((h) => edge.admission.complete(h, 700n, null)));
    expect(scripts).not.toHaveBeenCalled();
    scripts.mockRestore();
    expect(standings[5][0]).toMatchObject({ spentMicros: 4_900n, reservedMicros: 0n, remainingMicros: 1_000_000_000n - 4_900n });
    expect(await key.counter()).toEqual({ spent: 4_900, reserved: 0, leased: afterFirst.leased - 4_200 });

    // Shutdown gives everything unused back: the window counts the 6 calls, no slot stays taken.
    await edge.app.close();
    expect(await key.counter()).toEqual({ spent: 4_900, reserved: 0, leased: 0 });
    const rl = await key.rlKeys();
    const windowKey = rl.find((k) => k.includes(':w:'))!;
    expect(Number(await edges[0].redis.client.get(windowKey))).toBe(7);
    expect(await edges[0].redis.client.zcard(rl.find((k) => k.endsWith(':c'))!)).toBe(0);
    edges.splice(edges.indexOf(edge), 1);
  });

  it('should let exactly as many calls through two edges as the budget allows, with leases near and far from the limit', async () => {
    const allowed = 60;
    const key = await newKey(BigInt(allowed) * 1_000n);
    let admitted = 0;
    let leased = 0;
    let refused = 0;
    // 16 agents, 8 per edge, each calling until refused.
    await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const edge = edges[i % 2];
        for (;;) {
          const a = await admit(edge, 1_000n);
          if (!a.ok) {
            expect(a).toMatchObject({ budgetExceeded: { requestedMicros: 1_000n } });
            refused++;
            return;
          }
          admitted++;
          if (a.hold.leased) leased++;
          await new Promise((r) => setImmediate(r));
          await edge.admission.complete(a.hold, 1_000n, null);
        }
      }),
    );
    expect(admitted).toBe(allowed);
    expect(refused).toBe(16);
    expect(leased).toBeGreaterThan(0);
    await Promise.all(edges.map((e) => e.leases.settled()));
    expect(await key.counter()).toEqual({ spent: allowed * 1_000, reserved: 0, leased: 0 });
  });

  it('should count a lease whose edge died as spent no longer than its deadline', async () => {
    const [alive] = edges;
    const dying = await startEdge();
    const key = await newKey(1_000_000_000n);
    const seeding = await admit(dying, 1_000n);
    if (seeding.ok) await dying.admission.complete(seeding.hold, 1_000n, null);
    const a = await admit(dying, 1_000n);
    expect(a.ok && a.hold.leased).toBeTruthy();
    if (a.ok) await dying.admission.complete(a.hold, 1_000n, null);
    const held = (await key.counter()).leased;
    expect(held).toBeGreaterThan(0);

    // The dying edge never gives its lease back; once its deadline has passed (30 s), the next
    // grant in the organisation sweeps it: only the live edge's own lease is left.
    const later = Date.now() + 31_000;
    const b = await alive.admission.admit(caller, tool, 'after-deadline', 1_000n, later);
    expect(b.ok).toBe(true);
    const after = await key.counter();
    expect(after.spent).toBe(2_000);
    expect(after.leased).toBe(Number(alive.leases.holdings().budgetMicros));
    if (b.ok) await alive.admission.complete(b.hold, 1_000n, null);
    expect(after.reserved).toBe(b.ok && b.hold.leased ? 0 : 1_000);
    await alive.leases.settled();
    edges.splice(edges.indexOf(dying), 1);
    await dying.app.close();
  });
});
