import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BudgetAdminService, BudgetService } from '@tollgate/budget';
import { ConfigModule, loadEdgeConfig } from '@tollgate/config';
import { DbModule, PrismaService } from '@tollgate/db';
import { RateLimitAdminService, RateLimitService } from '@tollgate/rate-limit';
import { ensureRedisEpoch, RedisModule, RedisService, orgKeyOf } from '@tollgate/redis';
import { createTestEnv, TestEnv, TestClock, auditedByTest } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AdmissionLeases } from './admission-leases';
import { AdmissionModule } from './admission.module';
import { AdmissionSettings } from './admission-settings';
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

  async function startEdge(settings: Partial<AdmissionSettings> = {}): Promise<Edge> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(loadEdgeConfig(env.vars)),
        DbModule,
        RedisModule,
        AdmissionModule.forSettings({ reservationTtlMs: 30_000, leases: true, leaseIdleMs: 60_000, ...settings }),
      ],
      providers: [BudgetAdminService, RateLimitAdminService],
    }).compile();
    const app = moduleRef.createNestApplication();
    await app.init();
    const edge = {
      app,
      admission: app.get(CallAdmissionService),
      leases: app.get(AdmissionLeases),
      redis: app.get(RedisService),
    };
    edges.push(edge);
    return edge;
  }

  /** A fresh key (so each test has its own budget counters), with a KEY budget and optionally a rate limit. */
  async function newKey(budgetMicros: bigint, limit?: { callsPerWindow?: number; maxConcurrent?: number }) {
    const user = await prisma.user.create({ data: { orgId, email: `u${Math.random()}@x` } });
    const key = await prisma.virtualKey.create({
      data: {
        orgId,
        teamId: caller.teamId,
        userId: user.id,
        name: 'k',
        prefix: `tg_${Math.random()}`,
        secretHash: `h${Math.random()}`,
      },
    });
    caller = { ...caller, userId: user.id, keyId: key.id };
    const { budget } = await budgetAdmin.putBudget(
      orgId,
      {
        scope: 'KEY',
        scopeId: key.id,
        period: 'MONTH',
        limitMicros: budgetMicros,
        mode: 'HARD',
      },
      auditedByTest('budget.created', 'budget'),
    );
    const rule = limit
      ? await limitAdmin.createRateLimit(
          orgId,
          {
            scope: 'KEY',
            scopeId: key.id,
            toolPattern: 'fixture:*',
            windowSeconds: 3600,
            ...limit,
          },
          auditedByTest('rate-limit.created', 'rate-limit'),
        )
      : null;
    // Every edge sees the new rules (the caches drop on the config-changed message).
    for (const e of edges) {
      await expect
        .poll(async () => (await e.app.get(BudgetService).budgetsFor(caller)).map((b) => b.id))
        .toContain(budget.id);
      if (rule)
        await expect
          .poll(async () => (await e.app.get(RateLimitService).rulesFor(caller, tool)).map((r) => r.id))
          .toContain(rule.id);
    }
    const counter = async () => {
      const [k] = await edges[0].redis.client.keys(`${orgKeyOf(env.redisPrefix, orgId)}:budget:${budget.id}:*`);
      const [spent, reserved, leased] = await edges[0].redis.client.hmget(k, 'spent', 'reserved', 'leased');
      return { spent: Number(spent), reserved: Number(reserved ?? 0), leased: Number(leased ?? 0) };
    };
    const rlKeys = async () =>
      rule ? await edges[0].redis.client.keys(`${orgKeyOf(env.redisPrefix, orgId)}:rl:${rule.id}:*`) : [];
    return { keyId: key.id, counter, rlKeys };
  }

  let n = 0;
  const admit = (edge: Edge, estimate: bigint) =>
    edge.admission.admit(caller, tool, `call-${++n}`, estimate, Date.now());

  beforeAll(async () => {
    env = await createTestEnv();
    await startEdge();
    await startEdge();
    await ensureRedisEpoch(edges[0].redis.client, env.redisPrefix); // what the worker sets at its first start
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
    const scripts = vi.spyOn(edge.redis, 'run');
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
    expect(standings[5][0]).toMatchObject({
      spentMicros: 4_900n,
      reservedMicros: 0n,
      remainingMicros: 1_000_000_000n - 4_900n,
    });
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

  it('should count exactly what a dead edge answered under its lease once the lease is swept: counters equal the ledger', async () => {
    const [alive] = edges;
    const dying = await startEdge();
    const key = await newKey(1_000_000_000n);
    const stream = `${env.redisPrefix}:usage:events`;
    const usage = (id: string) => ({ stream, fields: ['e', JSON.stringify({ id })] as [string, string] });
    const seeding = await admit(dying, 1_000n);
    if (seeding.ok) await dying.admission.complete(seeding.hold, 1_000n, usage('seed'));
    // Five calls under the dying edge's lease: three answered (700 each), two still at their upstream.
    const calls = [];
    for (let i = 0; i < 5; i++) {
      const a = await admit(dying, 1_000n);
      expect(a.ok && a.hold.leased).toBeTruthy();
      if (a.ok) calls.push(a.hold);
    }
    for (const [i, hold] of calls.slice(0, 3).entries())
      await dying.admission.complete(hold, 700n, usage(`answered-${i}`));
    expect((await key.counter()).leased).toBeGreaterThan(0);

    // The edge dies (no renewal, no give-back, the two calls never complete). Past its deadline
    // (30 s) the next grant in the organisation sweeps its lease.
    const later = Date.now() + 31_000;
    const b = await alive.admission.admit(caller, tool, 'after-deadline', 1_000n, later);
    expect(b.ok).toBe(true);
    const after = await key.counter();
    const ledger = (await alive.redis.client.xrange(stream, '-', '+')).map(([, f]) => JSON.parse(f[1]).id as string);
    expect(ledger.filter((id) => id === 'seed' || id.startsWith('answered-'))).toHaveLength(4);
    expect(after.spent).toBe(1_000 + 3 * 700);
    expect(after.leased).toBe(Number(alive.leases.holdings().budgetMicros));
    expect(after.reserved).toBe(b.ok && b.hold.leased ? 0 : 1_000);
    if (b.ok) await alive.admission.complete(b.hold, 1_000n, null);
    await alive.leases.settled();
    edges.splice(edges.indexOf(dying), 1);
    await dying.app.close();
  });

  /** The organisation's budget lease records (ids `L:...`) and their deadlines. */
  async function leaseDeadlines(edge: Edge): Promise<Map<string, number>> {
    const [rKey, zKey] = [
      `${orgKeyOf(env.redisPrefix, orgId)}:budget-resv`,
      `${orgKeyOf(env.redisPrefix, orgId)}:budget-resv:deadlines`,
    ];
    const ids = (await edge.redis.client.hkeys(rKey)).filter((id) => id.startsWith('L:') && !id.endsWith('#'));
    const out = new Map<string, number>();
    for (const id of ids) out.set(id, Number(await edge.redis.client.zscore(zKey, id)));
    return out;
  }

  it('should renew a lease in use before its deadline and keep admitting under it', async () => {
    // TTL 6 s: local admission stops 2 s before the deadline (4 s after a grant), renewal runs every 2 s.
    const edge = await startEdge({ reservationTtlMs: 6_000 });
    await newKey(1_000_000_000n);
    const seeding = await admit(edge, 1_000n);
    if (seeding.ok) await edge.admission.complete(seeding.hold, 1_000n, null);
    const others = await leaseDeadlines(edge); // other tests' edges hold leases in this organisation too
    const grantedAt = Date.now();
    const first = await admit(edge, 1_000n);
    expect(first.ok && first.hold.leased).toBeTruthy();
    const [[leaseId, deadline]] = [...(await leaseDeadlines(edge))].filter(([id]) => !others.has(id));
    await expect
      .poll(async () => (await leaseDeadlines(edge)).get(leaseId), { timeout: 5_000 })
      .toBeGreaterThan(deadline);
    // Past the first grant's local validity (4 s), the renewed lease still admits: no new lease.
    const next = await edge.admission.admit(caller, tool, `renewed-${++n}`, 1_000n, grantedAt + 4_500);
    expect(next.ok && next.hold.leased).toBeTruthy();
    expect([...(await leaseDeadlines(edge)).keys()].filter((id) => !others.has(id))).toEqual([leaseId]);
    for (const a of [first, next]) if (a.ok) await edge.admission.complete(a.hold, 1_000n, null);
    edges.splice(edges.indexOf(edge), 1);
    await edge.app.close();
  });

  it('should give back a lease no call has used for the idle time', async () => {
    const edge = await startEdge({ leaseIdleMs: 200 });
    const key = await newKey(1_000_000_000n, { maxConcurrent: 1_000 });
    const seeding = await admit(edge, 1_000n);
    if (seeding.ok) await edge.admission.complete(seeding.hold, 1_000n, null);
    const a = await admit(edge, 1_000n);
    expect(a.ok && a.hold.leased).toBeTruthy();
    if (a.ok) await edge.admission.complete(a.hold, 600n, null);
    expect((await key.counter()).leased).toBeGreaterThan(0);
    await expect.poll(async () => (await key.counter()).leased, { timeout: 5_000 }).toBe(0);
    expect(await key.counter()).toEqual({ spent: 1_600, reserved: 0, leased: 0 });
    expect(edge.leases.holdings()).toEqual({ budgetMicros: 0n, windowCalls: 0, slots: 0 });
    const slots = (await key.rlKeys()).find((k) => k.endsWith(':c'))!;
    expect(await edge.redis.client.zcard(slots)).toBe(0);
    edges.splice(edges.indexOf(edge), 1);
    await edge.app.close();
  });

  it('should give back the unused calls of a window lease when its window ends', async () => {
    // Idle time 4 s (checked every second): the window (2 s) ends first.
    const edge = await startEdge({ leaseIdleMs: 4_000 });
    const key = await newKey(1_000_000_000n);
    const rule = await limitAdmin.createRateLimit(
      orgId,
      {
        scope: 'KEY',
        scopeId: key.keyId,
        toolPattern: 'fixture:*',
        windowSeconds: 2,
        callsPerWindow: 100_000,
      },
      auditedByTest('rate-limit.created', 'rate-limit'),
    );
    await expect
      .poll(async () => (await edge.app.get(RateLimitService).rulesFor(caller, tool)).map((r) => r.id))
      .toContain(rule.id);
    const windowOf = (at: number) => `${orgKeyOf(env.redisPrefix, orgId)}:rl:${rule.id}:w:${Math.floor(at / 2_000)}`;
    const admittedIn = new Map<string, number>();
    for (let i = 0; i < 4; i++) {
      const at = Date.now();
      const a = await edge.admission.admit(caller, tool, `w-${++n}`, 1_000n, at);
      expect(a.ok).toBe(true);
      admittedIn.set(windowOf(at), (admittedIn.get(windowOf(at)) ?? 0) + 1);
      if (a.ok) await edge.admission.complete(a.hold, 1_000n, null);
    }
    expect(edge.leases.holdings().windowCalls).toBeGreaterThan(0);
    // Once the window has ended, its counter holds exactly the calls admitted in it.
    await expect
      .poll(
        async () => {
          if (edge.leases.holdings().windowCalls > 0) return null;
          return Promise.all(
            [...admittedIn].map(async ([k, calls]) => [Number(await edge.redis.client.get(k)), calls]),
          );
        },
        { timeout: 6_000 },
      )
      .toSatisfy(
        (pairs: [number, number][] | null) => pairs !== null && pairs.every(([counted, calls]) => counted === calls),
      );
    edges.splice(edges.indexOf(edge), 1);
    await edge.app.close();
  });

  it('should give back its own unused lease and ask again when Redis refuses a call this edge could afford', async () => {
    const edge = await startEdge();
    const key = await newKey(100_000n);
    const seeding = await admit(edge, 1_000n);
    if (seeding.ok) await edge.admission.complete(seeding.hold, 1_000n, null);
    const small = await admit(edge, 1_000n);
    expect(small.ok && small.hold.leased).toBeTruthy();
    if (small.ok) await edge.admission.complete(small.hold, 1_000n, null);
    const before = await key.counter();
    // 2,000 spent and this edge's lease holding the rest of its grant: 90,000 fits only without the lease.
    expect(before.spent + before.leased + 90_000).toBeGreaterThan(100_000);
    const big = await admit(edge, 90_000n);
    expect(big.ok).toBe(true);
    expect(big.ok && big.hold.leased).toBe(null);
    expect(await key.counter()).toEqual({ spent: 2_000, reserved: 90_000, leased: 0 });
    if (big.ok) await edge.admission.complete(big.hold, 90_000n, null);
    edges.splice(edges.indexOf(edge), 1);
    await edge.app.close();
  });

  it('should hold a call that may become a task like any call, in Redis, until extendHold pushes its deadline out', async () => {
    // Frozen: the edge's renewal of its calls in flight (every 10 s here) then moves no deadline
    // between the admission and the checks below.
    const clock = new TestClock();
    clock.freeze();
    const edge = await startEdge({ clock });
    await newKey(1_000_000_000n, { callsPerWindow: 100_000, maxConcurrent: 1_000 });
    const [, zKey] = edge.app.get(BudgetService).recordKeys(orgId);
    const seeding = await admit(edge, 1_000n);
    if (seeding.ok) await edge.admission.complete(seeding.hold, 1_000n, null);
    const leased = await admit(edge, 1_000n);
    expect(leased.ok && leased.hold.leased).toBeTruthy();
    if (leased.ok) await edge.admission.complete(leased.hold, 1_000n, null);

    // Never against the lease this edge holds, and with a call's deadline (30 s here), not a task's.
    const now = clock.now();
    const a = await edge.admission.admit(caller, tool, 'may-be-task', 1_000n, now, { unleased: true });
    expect(a.ok && a.hold.leased).toBe(null);
    const hold = a.ok ? a.hold : (undefined as never);
    const slotKey = hold.admission!.slots[0].key;
    const deadlines = async () => [
      Number(await edge.redis.client.zscore(zKey, 'may-be-task')),
      Number(await edge.redis.client.zscore(slotKey, 'may-be-task')),
    ];
    expect(await deadlines()).toEqual([now + 30_000, now + 30_000]);

    // It became a task: reservation and concurrency slot held until the task's deadline, the set too.
    const until = now + 3_600_000;
    expect(await edge.admission.extendHold(hold, until, now)).toBe(true);
    expect(await deadlines()).toEqual([until, until]);
    expect(await edge.redis.client.pttl(slotKey)).toBeGreaterThan(3_500_000);

    // Settled: nothing is left to extend (a reservation swept already answers the same).
    await edge.admission.complete(hold, 1_000n, null);
    expect(await edge.admission.extendHold(hold, until + 1, now)).toBe(false);
    expect(await edge.redis.client.zscore(slotKey, 'may-be-task')).toBe(null);
    edges.splice(edges.indexOf(edge), 1);
    await edge.app.close();
  });

  it('should refuse to extend a call admitted against a lease', async () => {
    const edge = await startEdge();
    await newKey(1_000_000_000n);
    const seeding = await admit(edge, 1_000n);
    if (seeding.ok) await edge.admission.complete(seeding.hold, 1_000n, null);
    const leased = await admit(edge, 1_000n);
    expect(leased.ok && leased.hold.leased).toBeTruthy();
    const hold = leased.ok ? leased.hold : (undefined as never);
    await expect(edge.admission.extendHold(hold, Date.now() + 60_000)).rejects.toThrow(/leased/);
    await edge.admission.complete(hold, 1_000n, null);
    edges.splice(edges.indexOf(edge), 1);
    await edge.app.close();
  });
});
