import { randomUUID } from 'node:crypto';
import { loadWorkerConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallLogQuery, CallLogService } from './call-log.service';

type Outcome = 'OK' | 'TOOL_ERROR' | 'UPSTREAM_ERROR';

interface Call {
  id: string;
  teamId: string;
  userId: string;
  keyId: string;
  toolName: string;
  occurredAt: Date;
  outcome?: Outcome;
}

/** A test database, the log's reader and one organization to write calls for. */
interface LedgerFixture {
  env: TestEnv;
  prisma: PrismaService;
  log: CallLogService;
  orgId: string;
}

async function ledgerFixture(): Promise<LedgerFixture> {
  const env = await createTestEnv();
  const prisma = new PrismaService(loadWorkerConfig(env.vars));
  const orgId = (await prisma.organization.create({ data: { name: 'c', slug: `c-${randomUUID()}` } })).id;
  return { env, prisma, log: new CallLogService(prisma), orgId };
}

async function closeFixture(f: LedgerFixture | undefined): Promise<void> {
  await f?.prisma.onApplicationShutdown();
  await f?.env.cleanup();
}

/** Writes calls in one statement, as the worker writes a batch: the ledger's trigger keeps the rollups. */
async function writeCalls(f: LedgerFixture, calls: Call[]): Promise<void> {
  await f.prisma.usageEvent.createMany({
    data: calls.map((c) => ({
      ...c,
      orgId: f.orgId,
      upstreamId: '00000000-0000-4000-8000-000000000001',
      outcome: c.outcome ?? 'OK',
      costMicros: 5n,
      inputTokens: 0,
      outputTokens: 1,
      latencyMs: 1,
    })),
  });
}

/** Every page of the log from `from` to `to`, `limit` rows a page: the ids in order. */
async function allPages(
  f: LedgerFixture,
  query: Omit<CallLogQuery, 'from' | 'to' | 'limit'>,
  { from, to, limit }: { from: string; to: string; limit: number },
): Promise<string[]> {
  const ids: string[] = [];
  let cursor: CallLogQuery['cursor'] = null;
  for (let pages = 0; pages < 100; pages++) {
    const page = await f.log.callLog(f.orgId, { from, to, limit, cursor, ...query });
    ids.push(...page.rows.map((r) => r.id));
    if (!page.nextCursor) return ids;
    cursor = page.nextCursor;
  }
  throw new Error('more pages than calls');
}

/** What a plain filter of the ledger answers: the ids of the calls that pass, newest first. */
function newestFirst<C extends Call>(calls: C[], pass: (c: C) => boolean): string[] {
  return calls
    .filter(pass)
    .sort((a, b) => b.occurredAt.getTime() - a.occurredAt.getTime() || (a.id < b.id ? 1 : -1))
    .map((c) => c.id);
}

/**
 * The per-call log's filters against the ledger's own rows: a team's and a user's calls are read
 * through their keys (the ledger has no btree of its own for them), so every page must hold what a
 * plain filter of the ledger holds, in the same order, across pages and after a zone change.
 */
describe('the per-call log filtered by team, user, keys and tool', () => {
  let f: LedgerFixture;
  const calls: Call[] = [];
  const teams = [randomUUID(), randomUUID()];
  const users = [randomUUID(), randomUUID(), randomUUID()];
  // Key 3 moved from team 0 to team 1 on the second day: each row keeps the team it was made under.
  const keys = [
    { id: randomUUID(), team: 0, user: 0 },
    { id: randomUUID(), team: 0, user: 0 },
    { id: randomUUID(), team: 1, user: 1 },
    { id: randomUUID(), team: 0, user: 2 },
  ];
  // Key 4 made one call, late on 2028-03-10 in UTC: 2028-03-11 for a zone of UTC+14.
  const late = { id: randomUUID(), teamId: teams[1], userId: users[1], keyId: randomUUID(), toolName: 'tool_0' };

  beforeAll(async () => {
    f = await ledgerFixture();
    const start = Date.parse('2028-03-10T00:00:00Z');
    for (let i = 0; i < 90; i++) {
      const key = keys[(i * 7) % keys.length];
      const at = new Date(start + Math.floor(i / 30) * 86_400_000 + (i % 30) * 2_000_000 + (i % 3 === 0 ? 0 : 1));
      const moved = key === keys[3] && at.getTime() >= start + 86_400_000;
      calls.push({
        id: randomUUID(),
        teamId: teams[moved ? 1 : key.team],
        userId: users[key.user],
        keyId: key.id,
        toolName: `tool_${i % 4}`,
        occurredAt: at,
      });
    }
    calls.push({ ...late, occurredAt: new Date('2028-03-10T20:00:00.000Z') });
    // A statement a day, as the worker writes batches.
    for (const day of [calls.slice(0, 30), calls.slice(30, 60), calls.slice(60)]) await writeCalls(f, day);
  });

  afterAll(() => closeFixture(f));

  /** Every page of the log, 7 rows a page. */
  const pages = (query: Omit<CallLogQuery, 'from' | 'to' | 'limit'>, from = '2028-03-10', to = '2028-03-12') =>
    allPages(f, query, { from, to, limit: 7 });
  const expected = (pass: (c: Call) => boolean) => newestFirst(calls, pass);
  const setZone = (timeZone: string) => f.prisma.organization.update({ where: { id: f.orgId }, data: { timeZone } });

  it('should list exactly the calls made under a team or by a user, newest first, page after page', async () => {
    expect(await pages({ teamId: [teams[0]] })).toEqual(expected((c) => c.teamId === teams[0]));
    expect(await pages({ teamId: [teams[1]] })).toEqual(expected((c) => c.teamId === teams[1]));
    expect(await pages({ userId: [users[0]] })).toEqual(expected((c) => c.userId === users[0]));
    expect(await pages({ teamId: [teams[0]], userId: [users[2]] })).toEqual(
      expected((c) => c.teamId === teams[0] && c.userId === users[2]),
    );
    expect(await pages({ userId: [users[1], users[2]] })).toEqual(
      expected((c) => c.userId === users[1] || c.userId === users[2]),
    );
  });

  it('should list several keys, or a team and a tool, as a plain filter of the ledger does', async () => {
    expect(await pages({ keyId: [keys[0].id, keys[3].id] })).toEqual(
      expected((c) => c.keyId === keys[0].id || c.keyId === keys[3].id),
    );
    expect(await pages({ teamId: [teams[1]], tool: ['tool_2'] })).toEqual(
      expected((c) => c.teamId === teams[1] && c.toolName === 'tool_2'),
    );
  });

  it("should list exactly a tool's calls, alone or with other filters, newest first, page after page", async () => {
    for (const tool of ['tool_0', 'tool_1', 'tool_3'])
      expect(await pages({ tool: [tool] })).toEqual(expected((c) => c.toolName === tool));
    expect(await pages({ tool: ['tool_1', 'tool_2'] })).toEqual(
      expected((c) => c.toolName === 'tool_1' || c.toolName === 'tool_2'),
    );
    expect(await pages({ tool: ['tool_0'], userId: [users[0]] })).toEqual(
      expected((c) => c.toolName === 'tool_0' && c.userId === users[0]),
    );
    expect(await pages({ tool: ['tool_3'], keyId: [keys[3].id] })).toEqual(
      expected((c) => c.toolName === 'tool_3' && c.keyId === keys[3].id),
    );
    // One day: the pairs of the days around it are read, the rows of the day kept.
    const day = Date.parse('2028-03-11T00:00:00Z');
    const inDay = (c: Call) => c.occurredAt.getTime() >= day && c.occurredAt.getTime() < day + 86_400_000;
    expect(await pages({ tool: ['tool_0'] }, '2028-03-11', '2028-03-11')).toEqual(
      expected((c) => c.toolName === 'tool_0' && inDay(c)),
    );
    // No call of the tool, and an outcome none of its calls had.
    expect(await pages({ tool: ['tool_9'] })).toEqual([]);
    expect(await pages({ tool: ['tool_0'], outcome: ['TOOL_ERROR'] })).toEqual([]);
  });

  it("should still find a tool's calls of a day after the org's zone changed and before its rollups are rebuilt", async () => {
    await setZone('Pacific/Kiritimati');
    try {
      const from = Date.parse('2028-03-10T10:00:00Z');
      const inDay = (c: Call) => c.occurredAt.getTime() >= from && c.occurredAt.getTime() < from + 86_400_000;
      expect(await pages({ tool: ['tool_0'] }, '2028-03-11', '2028-03-11')).toEqual(
        expected((c) => c.toolName === 'tool_0' && inDay(c)),
      );
    } finally {
      await setZone('UTC');
    }
  });

  it("should still find a team's calls of a day after the org's zone changed and before its rollups are rebuilt", async () => {
    await setZone('Pacific/Kiritimati');
    try {
      // 2028-03-11 in UTC+14 is 2028-03-10T10:00Z to 2028-03-11T10:00Z.
      const from = Date.parse('2028-03-10T10:00:00Z');
      const inDay = (c: Call) => c.occurredAt.getTime() >= from && c.occurredAt.getTime() < from + 86_400_000;
      expect(await pages({ teamId: [teams[1]] }, '2028-03-11', '2028-03-11')).toEqual(
        expected((c) => c.teamId === teams[1] && inDay(c)),
      );
    } finally {
      await setZone('UTC');
    }
  });
});

/**
 * A tool's calls over a month, read through the (key, day) pairs that called it: only the newest
 * pairs whose calls make a page are read, the rest of the range only when those hold too few rows
 * of the outcomes asked (the rollup counts errors of both kinds as one).
 */
describe("the per-call log of a tool over a month's days", () => {
  let f: LedgerFixture;
  const outcomes = ['OK', 'TOOL_ERROR', 'UPSTREAM_ERROR'] as const;
  const calls: (Call & { outcome: Outcome })[] = [];
  const busyKey = { keyId: randomUUID(), teamId: randomUUID(), userId: randomUUID() };
  const quietKey = { keyId: randomUUID(), teamId: randomUUID(), userId: randomUUID() };

  beforeAll(async () => {
    f = await ledgerFixture();
    const start = Date.parse('2028-04-01T00:00:00Z');
    let rare = 0;
    for (let day = 0; day < 30; day++) {
      // The busy key calls tool_busy every hour; tool_rare every third day, from either key.
      for (let h = 0; h < 24; h++)
        calls.push({
          id: randomUUID(),
          ...busyKey,
          toolName: 'tool_busy',
          occurredAt: new Date(start + day * 86_400_000 + h * 3_600_000),
          outcome: 'OK',
        });
      if (day % 3 === 0)
        calls.push({
          id: randomUUID(),
          ...(day % 2 === 0 ? busyKey : quietKey),
          toolName: 'tool_rare',
          occurredAt: new Date(start + day * 86_400_000 + 23 * 3_600_000 + 59 * 60_000),
          outcome: outcomes[rare++ % 3],
        });
    }
    for (let i = 0; i < calls.length; i += 200) await writeCalls(f, calls.slice(i, i + 200));
  });

  afterAll(() => closeFixture(f));

  /** Every page of the log, 2 rows a page. */
  const pages = (query: Omit<CallLogQuery, 'from' | 'to' | 'limit'>, from = '2028-04-01', to = '2028-04-30') =>
    allPages(f, query, { from, to, limit: 2 });
  const expected = (pass: (c: (typeof calls)[number]) => boolean, from = '2028-04-01', to = '2028-04-30') =>
    newestFirst(
      calls,
      (c) =>
        pass(c) &&
        c.occurredAt >= new Date(`${from}T00:00:00Z`) &&
        c.occurredAt < new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000),
    );

  it("should page a rare tool's calls of every outcome asked, whichever key made them", async () => {
    expect(await pages({ tool: ['tool_rare'] })).toEqual(expected((c) => c.toolName === 'tool_rare'));
    for (const asked of [['OK'], ['TOOL_ERROR'], ['UPSTREAM_ERROR'], ['OK', 'UPSTREAM_ERROR']] as const)
      expect(await pages({ tool: ['tool_rare'], outcome: [...asked] })).toEqual(
        expected((c) => c.toolName === 'tool_rare' && (asked as readonly string[]).includes(c.outcome)),
      );
    expect(await pages({ tool: ['tool_rare'], keyId: [quietKey.keyId] })).toEqual(
      expected((c) => c.toolName === 'tool_rare' && c.keyId === quietKey.keyId),
    );
    expect(await pages({ tool: ['tool_rare'] }, '2028-04-05', '2028-04-20')).toEqual(
      expected((c) => c.toolName === 'tool_rare', '2028-04-05', '2028-04-20'),
    );
  });

  it("should page a busy tool's calls in a few days' reads", async () => {
    const page = await f.log.callLog(f.orgId, { from: '2028-04-01', to: '2028-04-30', limit: 50, tool: ['tool_busy'] });
    expect(page.rows.map((r) => r.id)).toEqual(expected((c) => c.toolName === 'tool_busy').slice(0, 50));
    expect(await pages({ tool: ['tool_busy'] }, '2028-04-28', '2028-04-30')).toEqual(
      expected((c) => c.toolName === 'tool_busy', '2028-04-28', '2028-04-30'),
    );
  });
});
