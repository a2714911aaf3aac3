import { Test } from '@nestjs/testing';
import { ConfigModule, loadEdgeConfig } from '@tollgate/config';
import { DbModule, PrismaService } from '@tollgate/db';
import { ToolRef } from '@tollgate/kernel';
import { RateLimitAdminService, RateLimitService } from '@tollgate/rate-limit';
import { ensureRedisEpoch, RedisModule, RedisService } from '@tollgate/redis';
import { createTestEnv, TestClock, TestEnv, auditedByTest } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdmissionModule } from './admission.module';
import { CallAdmission, CallAdmissionService } from './call-admission.service';

/** Rate limits as the edge checks them, one call at a time (no leases), on real Redis. */
describe('Rate-limit admission on real Redis', () => {
  let env: TestEnv;
  let limits: RateLimitService;
  let admin: RateLimitAdminService;
  let admission: CallAdmissionService;
  let close: () => Promise<void>;
  let caller: { orgId: string; teamId: string; userId: string; keyId: string; timeZone: string };
  const tool = { namespace: 'github', tool: 'search_code' };
  // The edge's clock, frozen: its calls' slots are renewed (to now + TTL) only as far as a test moves it.
  const clock = new TestClock();

  /** The call's admission, as rl_check sees it: admitted, or the refusal (rule, kind, retryAfterMs). */
  async function admitCall(t: ToolRef, callId: string, now: number) {
    const a = await admission.admit(caller, t, callId, 0n, now);
    if (a.ok) return { admitted: true as const, release: () => release(a) };
    if ('rateLimited' in a) return a.rateLimited;
    throw new Error('unexpected budget refusal');
  }

  async function release(a: Extract<CallAdmission, { ok: true }>) {
    await admission.complete(a.hold, 0n, null);
  }

  beforeAll(async () => {
    env = await createTestEnv();
    clock.freeze();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(loadEdgeConfig(env.vars)),
        DbModule,
        RedisModule,
        AdmissionModule.forSettings({ reservationTtlMs: 120_000, leases: false, leaseIdleMs: 1_000, clock }),
      ],
      providers: [RateLimitAdminService],
    }).compile();
    const app = moduleRef.createNestApplication();
    await app.init();
    close = () => app.close();
    limits = app.get(RateLimitService);
    admin = app.get(RateLimitAdminService);
    admission = app.get(CallAdmissionService);
    await ensureRedisEpoch(app.get(RedisService).client, env.redisPrefix); // what the worker sets at its first start
    const prisma = app.get(PrismaService);
    const org = await prisma.organization.create({ data: { name: 'o', slug: 'o' } });
    const team = await prisma.team.create({ data: { orgId: org.id, name: 't' } });
    const user = await prisma.user.create({ data: { orgId: org.id, email: 'u@x' } });
    const key = await prisma.virtualKey.create({
      data: { orgId: org.id, teamId: team.id, userId: user.id, name: 'k', prefix: 'tg_x', secretHash: 'h' },
    });
    caller = { orgId: org.id, teamId: team.id, userId: user.id, keyId: key.id, timeZone: org.timeZone };
  });

  afterAll(async () => {
    await close?.();
    await env?.cleanup();
  });

  it('should slide the window: the previous window counts by how much of it still overlaps', async () => {
    const rule = await admin.createRateLimit(
      caller.orgId,
      {
        scope: 'KEY',
        scopeId: caller.keyId,
        toolPattern: 'github:search_*',
        callsPerWindow: 10,
        windowSeconds: 60,
      },
      auditedByTest('rate-limit.created', 'rate-limit'),
    );
    await expect.poll(async () => (await limits.rulesFor(caller, tool)).map((r) => r.id)).toEqual([rule.id]);
    const t0 = Math.floor(Date.now() / 60_000) * 60_000; // the start of a window
    for (let i = 0; i < 10; i++) expect((await admitCall(tool, `a${i}`, t0 + 1000)).admitted).toBe(true);
    const eleventh = await admitCall(tool, 'a10', t0 + 2000);
    expect(eleventh).toMatchObject({ admitted: false, kind: 'WINDOW', retryAfterMs: 64_000 });
    // Just after the window turns, the previous 10 calls still weigh ~10: refused.
    expect((await admitCall(tool, 'b0', t0 + 61_000)).admitted).toBe(false);
    // Half way into the next window they weigh 5: five more calls fit, the sixth does not.
    for (let i = 0; i < 5; i++) expect((await admitCall(tool, `c${i}`, t0 + 90_000)).admitted).toBe(true);
    expect((await admitCall(tool, 'c5', t0 + 90_000)).admitted).toBe(false);
    // Another tool is not counted by this rule.
    expect((await admitCall({ namespace: 'github', tool: 'create_issue' }, 'd0', t0 + 90_000)).admitted).toBe(true);
    await admin.deleteRateLimit(caller.orgId, rule.id, auditedByTest('rate-limit.deleted', 'rate-limit'));
  });

  it('should cap concurrent calls and free a slot when a call is released or its deadline passes', async () => {
    const rule = await admin.createRateLimit(
      caller.orgId,
      { scope: 'USER', scopeId: caller.userId, maxConcurrent: 2 },
      auditedByTest('rate-limit.created', 'rate-limit'),
    );
    await expect.poll(async () => (await limits.rulesFor(caller, tool)).map((r) => r.id)).toEqual([rule.id]);
    const now = clock.now();
    const a = await admitCall(tool, 'x1', now);
    const b = await admitCall(tool, 'x2', now);
    expect(a.admitted && b.admitted).toBe(true);
    expect(await admitCall(tool, 'x3', now)).toMatchObject({ admitted: false, kind: 'CONCURRENCY' });
    if (a.admitted) await a.release();
    expect((await admitCall(tool, 'x4', now)).admitted).toBe(true);
    // Nobody releases x2 and x4 (their edge died): after the deadline (120 s) the slots are free.
    expect((await admitCall(tool, 'x5', now + 121_000)).admitted).toBe(true);
    await admin.deleteRateLimit(caller.orgId, rule.id, auditedByTest('rate-limit.deleted', 'rate-limit'));
  });

  it('should say when a refused call would be admitted: refused a millisecond before, admitted then', async () => {
    const exact = { namespace: 'github', tool: 'exact_window' };
    const rule = await admin.createRateLimit(
      caller.orgId,
      {
        scope: 'KEY',
        scopeId: caller.keyId,
        toolPattern: 'github:exact_window',
        callsPerWindow: 3,
        windowSeconds: 10,
      },
      auditedByTest('rate-limit.created', 'rate-limit'),
    );
    await expect.poll(async () => (await limits.rulesFor(caller, exact)).map((r) => r.id)).toEqual([rule.id]);
    const t0 = (Math.floor(Date.now() / 10_000) + 1) * 10_000;
    for (let i = 0; i < 3; i++) expect((await admitCall(exact, `e${i}`, t0 + 500)).admitted).toBe(true);
    // The window is full: the call fits once the next window has weighed these 3 down to 2.
    let at = t0 + 4_000;
    for (const expected of [9_334, 3_333]) {
      const refused = await admitCall(exact, `r${at}`, at);
      expect(refused).toMatchObject({ admitted: false, kind: 'WINDOW', retryAfterMs: expected });
      expect((await admitCall(exact, `b${at}`, at + expected - 1)).admitted).toBe(false);
      expect((await admitCall(exact, `a${at}`, at + expected)).admitted).toBe(true);
      at += expected;
    }
    await admin.deleteRateLimit(caller.orgId, rule.id, auditedByTest('rate-limit.deleted', 'rate-limit'));
  });

  it('should say a concurrency refusal is over at the earliest deadline of the calls in flight', async () => {
    const exact = { namespace: 'github', tool: 'exact_slots' };
    const rule = await admin.createRateLimit(
      caller.orgId,
      {
        scope: 'KEY',
        scopeId: caller.keyId,
        toolPattern: 'github:exact_slots',
        maxConcurrent: 2,
      },
      auditedByTest('rate-limit.created', 'rate-limit'),
    );
    await expect.poll(async () => (await limits.rulesFor(caller, exact)).map((r) => r.id)).toEqual([rule.id]);
    const now = clock.now();
    expect((await admitCall(exact, 's1', now)).admitted).toBe(true);
    expect((await admitCall(exact, 's2', now + 5_000)).admitted).toBe(true);
    const refused = await admitCall(exact, 's3', now + 6_000);
    // s1's deadline (120 s after it started) frees a slot.
    expect(refused).toMatchObject({ admitted: false, kind: 'CONCURRENCY', retryAfterMs: 114_000 });
    expect((await admitCall(exact, 's4', now + 119_999)).admitted).toBe(false);
    expect((await admitCall(exact, 's5', now + 120_000)).admitted).toBe(true);
    await admin.deleteRateLimit(caller.orgId, rule.id, auditedByTest('rate-limit.deleted', 'rate-limit'));
  });

  it('should keep a live edge’s concurrency slot taken while its call runs past the TTL', async () => {
    const slow = { namespace: 'github', tool: 'slow_slots' };
    const rule = await admin.createRateLimit(
      caller.orgId,
      { scope: 'KEY', scopeId: caller.keyId, toolPattern: 'github:slow_slots', maxConcurrent: 1 },
      auditedByTest('rate-limit.created', 'rate-limit'),
    );
    await expect.poll(async () => (await limits.rulesFor(caller, slow)).map((r) => r.id)).toEqual([rule.id]);
    const running = await admitCall(slow, 'long', clock.now());
    expect(running.admitted).toBe(true);
    // 160 s on (the TTL is 120 s), renewed every 40 s as the edge's clock moves: the slot is still taken.
    for (let i = 0; i < 4; i++) await clock.elapse(40_000);
    expect(await admitCall(slow, 'meanwhile', clock.now())).toMatchObject({ admitted: false, kind: 'CONCURRENCY' });
    if (running.admitted) await running.release();
    expect((await admitCall(slow, 'after', clock.now())).admitted).toBe(true);
    await admin.deleteRateLimit(caller.orgId, rule.id, auditedByTest('rate-limit.deleted', 'rate-limit'));
  });

  it('should refuse a rule for a scope of another organisation', async () => {
    await expect(
      admin.createRateLimit(
        caller.orgId,
        {
          scope: 'TEAM',
          scopeId: '00000000-0000-4000-8000-000000000000',
          callsPerWindow: 1,
        },
        auditedByTest('rate-limit.created', 'rate-limit'),
      ),
    ).rejects.toMatchObject({ code: 'SCOPE_NOT_FOUND' });
  });
});
