import { Test } from '@nestjs/testing';
import { BudgetService, BudgetStanding, SpendScopes } from '@tollgate/budget';
import { ConfigModule, loadEdgeConfig } from '@tollgate/config';
import { DbModule, PrismaService } from '@tollgate/db';
import { ensureRedisEpoch, RedisModule, RedisService, orgKeyOf } from '@tollgate/redis';
import { createTestEnv, deleteRedisKeys, TestClock, TestEnv } from '@tollgate/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AdmissionModule } from './admission.module';
import { CallAdmissionService, CallHold, CORRUPT_COUNTER_RETRY_MS } from './call-admission.service';

/** Budgets as the edge checks them, one call at a time (no leases): reserve, settle, sweep, rebuild. */
describe('Budget admission on real Redis and Postgres', () => {
  let env: TestEnv;
  let budgets: BudgetService;
  let admission: CallAdmissionService;
  let prisma: PrismaService;
  let redis: RedisService;
  let close: () => Promise<void>;
  let scopes: SpendScopes;
  const tool = { namespace: 'fixture', tool: 'echo' };
  // The edge's clock, frozen: its holds are renewed (to now + TTL) only as far as a test moves it.
  const clock = new TestClock();

  type Reserved = { ok: true; hold: CallHold; standings: BudgetStanding[] } | { ok: false; exceeded: BudgetStanding };

  /** Admits a call of `amount` (its reservation), as the edge does before the upstream. */
  async function reserve(id: string, amount: bigint, at = new Date(clock.now())): Promise<Reserved> {
    const a = await admission.admit(scopes, tool, id, amount, at.getTime());
    if (a.ok) return { ok: true, hold: a.hold, standings: a.hold.standings };
    if ('budgetExceeded' in a) return { ok: false, exceeded: a.budgetExceeded.exceeded };
    throw new Error('unexpected rate limit');
  }

  /** Settles a call at its actual cost, as the edge does after the upstream. */
  async function settle(r: Reserved, actual: bigint): Promise<BudgetStanding[]> {
    if (!r.ok) throw new Error('expected an admitted call');
    return admission.complete(r.hold, actual, null);
  }

  beforeAll(async () => {
    env = await createTestEnv({ RESERVATION_TTL_SECONDS: '5' });
    clock.freeze();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(loadEdgeConfig(env.vars)),
        DbModule,
        RedisModule,
        AdmissionModule.forSettings({ reservationTtlMs: 5_000, leases: false, leaseIdleMs: 1_000, clock }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication();
    await app.init();
    close = () => app.close();
    budgets = app.get(BudgetService);
    admission = app.get(CallAdmissionService);
    prisma = app.get(PrismaService);
    redis = app.get(RedisService);
    await ensureRedisEpoch(redis.client, redis.prefix); // what the worker sets at its first start
  });

  // Each test has an organisation, key and ledger of its own: none reads what another left behind.
  let orgs = 0;
  beforeEach(async () => {
    const n = ++orgs;
    const org = await prisma.organization.create({
      data: { name: `o${n}`, slug: `o${n}`, timeZone: 'Europe/Berlin' },
    });
    const team = await prisma.team.create({ data: { orgId: org.id, name: 't' } });
    const user = await prisma.user.create({ data: { orgId: org.id, email: 'u@x' } });
    const key = await prisma.virtualKey.create({
      data: { orgId: org.id, teamId: team.id, userId: user.id, name: 'k', prefix: `tg_x${n}`, secretHash: `h${n}` },
    });
    scopes = { orgId: org.id, teamId: team.id, userId: user.id, keyId: key.id, timeZone: org.timeZone };
  });

  afterAll(async () => {
    await close?.();
    await env?.cleanup();
  });

  async function setBudgets(
    rows: {
      scope: 'ORG' | 'TEAM' | 'USER' | 'KEY';
      limit: bigint;
      mode?: 'HARD' | 'SOFT';
      period?: 'DAY' | 'MONTH' | 'TOTAL';
    }[],
  ) {
    await prisma.budget.deleteMany({ where: { orgId: scopes.orgId } });
    const idOf = { ORG: scopes.orgId, TEAM: scopes.teamId, USER: scopes.userId, KEY: scopes.keyId };
    for (const r of rows) {
      await prisma.budget.create({
        data: {
          orgId: scopes.orgId,
          scope: r.scope,
          scopeId: idOf[r.scope],
          period: r.period ?? 'MONTH',
          limitMicros: r.limit,
          mode: r.mode ?? 'HARD',
        },
      });
    }
    await redis.publish('org-config-changed', scopes.orgId);
    await deleteRedisKeys(env.redisUrl, `${orgKeyOf(env.redisPrefix, scopes.orgId)}`);
    // The cache drops on the pub/sub message; wait until the service sees the new rules.
    await expect.poll(async () => (await budgets.budgetsFor(scopes)).length).toBe(rows.length);
  }

  /** A charged call of the key in the ledger, as the worker writes it. */
  async function recordSpend(id: string, costMicros: bigint) {
    await prisma.usageEvent.create({
      data: {
        id,
        orgId: scopes.orgId,
        teamId: scopes.teamId,
        userId: scopes.userId,
        keyId: scopes.keyId,
        upstreamId: scopes.orgId,
        toolName: 't',
        outcome: 'OK',
        costMicros,
        latencyMs: 1,
        occurredAt: new Date(),
      },
    });
  }

  it('should let exactly N of many concurrent reservations through when the budget covers N', async () => {
    await setBudgets([{ scope: 'KEY', limit: 10_000n }]);
    const outcomes = await Promise.all(Array.from({ length: 64 }, (_, i) => reserve(`r${i}`, 1_000n)));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(10);
    const refused = outcomes.find((o) => !o.ok);
    expect(refused && !refused.ok && refused.exceeded).toMatchObject({
      scope: 'KEY',
      limitMicros: 10_000n,
      reservedMicros: 10_000n,
    });
  });

  it('should refuse at the tightest level and reserve nothing anywhere when one level is short', async () => {
    await setBudgets([
      { scope: 'ORG', limit: 1_000_000n },
      { scope: 'TEAM', limit: 2_500n },
      { scope: 'KEY', limit: 1_000_000n },
    ]);
    const a = await reserve('a', 2_000n);
    expect(a.ok).toBe(true);
    const b = await reserve('b', 1_000n);
    expect(b.ok).toBe(false);
    if (!b.ok) expect(b.exceeded.scope).toBe('TEAM');
    const standings = await budgets.standingsFor(scopes);
    expect(standings.map((s) => [s.scope, s.reservedMicros])).toEqual([
      ['KEY', 2_000n],
      ['TEAM', 2_000n],
      ['ORG', 2_000n],
    ]);
  });

  it('should replace the reservation by the actual cost when settled', async () => {
    await setBudgets([{ scope: 'USER', limit: 10_000n }]);
    const r = await reserve('s1', 5_000n);
    if (!r.ok) throw new Error('expected ok');
    const after = await settle(r, 1_200n);
    expect(after[0]).toMatchObject({ spentMicros: 1_200n, reservedMicros: 0n, remainingMicros: 8_800n });
    const released = await reserve('s2', 8_000n);
    if (!released.ok) throw new Error('expected ok');
    expect((await settle(released, 0n))[0]).toMatchObject({ spentMicros: 1_200n, reservedMicros: 0n });
  });

  it('should release a reservation whose edge died once its deadline passes', async () => {
    await setBudgets([{ scope: 'KEY', limit: 1_000n }]);
    const start = new Date(clock.now());
    const held = await reserve('dead-edge', 1_000n, start);
    expect(held.ok).toBe(true);
    expect((await reserve('next', 1_000n, new Date(start.getTime() + 1000))).ok).toBe(false);
    // Six seconds later (TTL is 5 s) the dead reservation is swept by the next reservation.
    const later = await reserve('later', 1_000n, new Date(start.getTime() + 6000));
    expect(later.ok).toBe(true);
  });

  it('should refuse a call on the money a live edge’s slow call holds when that call runs past the TTL', async () => {
    await setBudgets([{ scope: 'KEY', limit: 1_000n }]);
    const slow = await reserve('slow', 1_000n);
    expect(slow.ok).toBe(true);
    // The call runs on past the 5 s TTL; the edge renews its hold every TTL/3 as its clock moves.
    for (let i = 0; i < 4; i++) await clock.elapse(1_600);
    const during = await reserve('during-slow', 1_000n);
    expect(during.ok).toBe(false);
    if (!during.ok) expect(during.exceeded).toMatchObject({ spentMicros: 0n, reservedMicros: 1_000n });
    // The slow call settles within its budget: the limit is never exceeded.
    expect((await settle(slow, 1_000n))[0]).toMatchObject({ spentMicros: 1_000n, remainingMicros: 0n });
    expect((await budgets.standingsFor(scopes))[0]).toMatchObject({ spentMicros: 1_000n, reservedMicros: 0n });
  });

  it('should rebuild a lost counter from the ledger before allowing the next call', async () => {
    await setBudgets([{ scope: 'KEY', limit: 10_000n, period: 'TOTAL' }]);
    await recordSpend('ledger-1', 9_500n);
    // Redis lost everything for this org.
    await deleteRedisKeys(env.redisUrl, `${orgKeyOf(env.redisPrefix, scopes.orgId)}`);
    const r = await reserve('after-loss', 1_000n);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.exceeded.spentMicros).toBe(9_500n);
    expect((await reserve('small', 500n)).ok).toBe(true);
  });

  it('should not invent a counter when Redis lost it while a call was in flight', async () => {
    await setBudgets([{ scope: 'KEY', limit: 20_000n, period: 'TOTAL' }]);
    await recordSpend('ledger-2a', 9_500n);
    await recordSpend('ledger-2b', 4_000n);
    const inFlight = await reserve('in-flight', 1_000n);
    expect(inFlight.ok).toBe(true);
    // Redis loses the counter (and the reservation) while the upstream works; the call then settles.
    await deleteRedisKeys(env.redisUrl, `${orgKeyOf(env.redisPrefix, scopes.orgId)}`);
    await settle(inFlight, 1_000n);
    // The settlement did not create a counter holding only its own 1,000: the next call rebuilds
    // the counter from the ledger (13,500 there) and sees the real spend.
    const next = await reserve('next-after-loss', 7_000n);
    expect(next.ok).toBe(false);
    if (!next.ok) expect(next.exceeded.spentMicros).toBe(13_500n);
  });

  it('should sweep a dead reservation once, across every budget it held', async () => {
    await recordSpend('ledger-3', 13_500n);
    await setBudgets([
      { scope: 'KEY', limit: 100_000n },
      { scope: 'ORG', limit: 100_000n },
    ]);
    const start = new Date(clock.now());
    expect((await reserve('dead-two', 60_000n, start)).ok).toBe(true);
    expect((await reserve('while-held', 60_000n, new Date(start.getTime() + 1000))).ok).toBe(false);
    // Past the 5 s deadline the dead reservation leaves both budgets; only the new one is held.
    const later = await reserve('after-sweep', 60_000n, new Date(start.getTime() + 6000));
    expect(later.ok && later.standings.map((s) => [s.scope, s.spentMicros, s.reservedMicros])).toEqual([
      ['KEY', 13_500n, 60_000n],
      ['ORG', 13_500n, 60_000n],
    ]);
  });

  it('should allow a soft budget to go over', async () => {
    await setBudgets([{ scope: 'KEY', limit: 100n, mode: 'SOFT' }]);
    const r = await reserve('soft', 1_000n);
    expect(r.ok).toBe(true);
  });

  it('should refuse calls on a corrupt counter with a structured answer, writing nothing, and admit again once it is rebuilt from the ledger', async () => {
    const limit = 10_000_000n;
    await setBudgets([{ scope: 'KEY', limit, period: 'TOTAL' }]);
    await recordSpend('ledger-c', 2_000n);
    expect((await reserve('seeds-the-counter', 0n)).ok).toBe(true);
    const [check] = await budgets.checkCounters(scopes.orgId, scopes.timeZone);
    const key = redis.orgKey(
      scopes.orgId,
      'budget',
      check.standing.budgetId,
      String(check.standing.periodStart.getTime()),
    );
    await redis.client.hset(key, 'spent', 'not-a-number');

    expect(await admission.admit(scopes, tool, 'on-corrupt', 1_000n, Date.now())).toEqual({
      ok: false,
      countersUnavailable: { retryAfterMs: CORRUPT_COUNTER_RETRY_MS, reason: 'counter-corrupt' },
    });
    expect(await redis.client.hgetall(key)).toEqual({ spent: 'not-a-number', reserved: '0' });

    // What reconciliation runs first: the corrupt counter dropped and seeded again from the ledger.
    const [rebuilt] = await budgets.checkCounters(scopes.orgId, scopes.timeZone, { rebuildMissing: true });
    expect(rebuilt).toMatchObject({ rebuilt: true, corrupt: { spent: 'not-a-number', reserved: '0', leased: '' } });
    expect(await redis.client.hget(key, 'spent')).toBe(rebuilt.ledgerSpentMicros.toString());
    expect((await reserve('fits-exactly', limit - rebuilt.ledgerSpentMicros)).ok).toBe(true);
    expect((await reserve('one-over', 1n)).ok).toBe(false);
  });
});
