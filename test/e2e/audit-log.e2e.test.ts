import { PrismaClient } from '@prisma/client';
import { PrismaPg } from '@prisma/adapter-pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';

interface Row {
  id: string;
  orgId: string;
  actorId: string;
  actor: { user: { id: string; email: string } | null } | null;
  action: string;
  targetType: string;
  targetId: string | null;
  createdAt: string;
}
interface Page {
  events: Row[];
  nextCursor: string | null;
}

describe('audit log search: filters and keyset pages', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let orgId: string;
  let otherOrgId: string;
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};

  const search = async (query: string, token?: string) =>
    p.admin<Page>('GET', `/v1/orgs/${orgId}/audit/search?${query}`, undefined, token);
  const events = async (query: string) => {
    const res = await search(`limit=500&${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    return res.body.events;
  };
  const ok = async <T>(res: Promise<{ status: number; body: T }>, status = 201): Promise<T> => {
    const r = await res;
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    return r.body;
  };

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    // Tokyo is UTC+9 all year: a change at 15:00 UTC is the next calendar day there.
    orgId = (await ok(p.admin('POST', '/v1/orgs', { name: 'Kaisha', slug: 'kaisha', timeZone: 'Asia/Tokyo' }))).id;
    otherOrgId = (await ok(p.admin('POST', '/v1/orgs', { name: 'Other', slug: 'other-audit' }))).id;
    ids.team = (await ok(p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'platform' }))).id;
    ids.grace = (
      await ok(p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'grace@kaisha.test', name: 'Grace Hopper' }))
    ).id;
    ids.ada = (await ok(p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'ada@kaisha.test', name: 'Ada' }))).id;
    await ok(p.admin('POST', `/v1/orgs/${orgId}/teams/${ids.team}/members`, { userId: ids.ada }));
    const issue = async (body: Record<string, unknown>) => {
      const res = await ok<{ secret: string; id: string }>(p.admin('POST', '/v1/admin-tokens', body));
      return res;
    };
    const grace = await issue({ role: 'ORG_ADMIN', orgId, userId: ids.grace, name: 'grace laptop' });
    tokens.grace = grace.secret;
    ids.graceToken = grace.id;
    tokens.finance = (await issue({ role: 'FINANCE', orgId, name: 'kaisha finance' })).secret;
    tokens.member = (await issue({ role: 'MEMBER', orgId, userId: ids.ada, teamId: ids.team, name: 'ada' })).secret;

    // Grace creates five teams and renames one; the platform token issues three keys and revokes one.
    for (let i = 0; i < 5; i++) {
      ids[`t${i}`] = (await ok(p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: `squad-${i}` }, tokens.grace))).id;
    }
    await ok(p.admin('PATCH', `/v1/orgs/${orgId}/teams/${ids.t0}`, { name: 'squad-zero' }, tokens.grace), 200);
    for (let i = 0; i < 3; i++) {
      ids[`k${i}`] = (
        await ok<{ key: { id: string } }>(
          p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId: ids.team, userId: ids.ada, name: `agent-${i}` }),
        )
      ).key.id;
    }
    await ok(p.admin('POST', `/v1/orgs/${orgId}/keys/${ids.k1}/revoke`), 200);
    // Another org's trail, with the same actions.
    ids.otherTeam = (await ok(p.admin('POST', `/v1/orgs/${otherOrgId}/teams`, { name: 'platform' }))).id;
  });

  afterAll(async () => {
    await db?.$disconnect();
    await p?.close();
  });

  it('should filter by exact action, by prefix, and by a list of both', async () => {
    expect((await events('action=team.updated')).map((e) => [e.action, e.targetId])).toEqual([
      ['team.updated', ids.t0],
    ]);
    const keys = await events('action=key.*');
    expect(keys.map((e) => e.action).sort()).toEqual(['key.created', 'key.created', 'key.created', 'key.revoked']);
    const both = await events('action=key.revoked,team.*');
    expect(new Set(both.map((e) => e.action))).toEqual(
      new Set(['key.revoked', 'team.created', 'team.member-added', 'team.updated']),
    );
    expect(both.filter((e) => e.action === 'team.created')).toHaveLength(6); // `platform` and the five squads
    expect(await events('action=*')).toHaveLength((await events('')).length);
  });

  it('should filter by who: a person under any of their tokens, or one token', async () => {
    const byGrace = await events(`actor=${ids.grace}`);
    expect(byGrace).toHaveLength(6);
    expect(byGrace.every((e) => e.actor?.user?.email === 'grace@kaisha.test')).toBe(true);
    expect((await events(`actor=${ids.graceToken}`)).map((e) => e.id)).toEqual(byGrace.map((e) => e.id));
    const byBootstrap = await events('actor=bootstrap&action=key.*');
    expect(byBootstrap).toHaveLength(4);
    expect(await events(`actor=${ids.ada}`)).toEqual([]);
  });

  it('should filter by target type and id', async () => {
    const k1 = await events(`targetType=virtual-key&targetId=${ids.k1}`);
    expect(k1.map((e) => e.action)).toEqual(['key.revoked', 'key.created']);
    expect((await events('targetType=virtual-key')).every((e) => e.targetType === 'virtual-key')).toBe(true);
    expect(await events(`targetType=team&targetId=${ids.k1}`)).toEqual([]);
  });

  it('should count days in the org’s time zone, both ends inclusive', async () => {
    const [a, b] = await events(`targetType=team&targetId=${ids.t1}`).then(async (t1) => [
      t1[0],
      (await events(`targetType=team&targetId=${ids.t2}`))[0],
    ]);
    // 23:59:59.999 on 10 March in Tokyo, and midnight of 11 March there: both on 10 March in UTC.
    await db.auditEvent.update({ where: { id: a.id }, data: { createdAt: new Date('2026-03-10T14:59:59.999Z') } });
    await db.auditEvent.update({ where: { id: b.id }, data: { createdAt: new Date('2026-03-10T15:00:00.000Z') } });
    expect((await events('from=2026-03-10&to=2026-03-10')).map((e) => e.id)).toEqual([a.id]);
    expect((await events('from=2026-03-11&to=2026-03-11')).map((e) => e.id)).toEqual([b.id]);
    expect((await events('from=2026-03-01&to=2026-03-31')).map((e) => e.id)).toEqual([b.id, a.id]);
    expect((await events('to=2026-03-31')).map((e) => e.id)).toEqual([b.id, a.id]);
    const recent = await events('from=2026-03-12');
    expect(recent.map((e) => e.id)).not.toContain(a.id);
    expect(recent.length).toBe((await events('')).length - 2);
  });

  it('should take the widest range of days Postgres can hold, the last day open-ended', async () => {
    const all = await events('');
    expect((await events('from=1970-01-01&to=9999-12-31')).map((e) => e.id)).toEqual(all.map((e) => e.id));
    expect(await events('from=9999-12-31')).toEqual([]);
    // In UTC (the other org's zone) the day after 9999-12-31 starts in year 10000, which Postgres cannot take.
    const other = await p.admin<Page>('GET', `/v1/orgs/${otherOrgId}/audit/search?from=1970-01-01&to=9999-12-31`);
    expect(other.status, JSON.stringify(other.body)).toBe(200);
    expect(other.body.events.map((e) => e.action)).toContain('team.created');
  });

  it('should walk every event exactly once in pages, even with equal times and rows written meanwhile', async () => {
    // Three rows at the very same millisecond: the id breaks the tie.
    const same = await events('action=key.created');
    for (const e of same) {
      await db.auditEvent.update({ where: { id: e.id }, data: { createdAt: new Date('2026-04-01T00:00:00.000Z') } });
    }
    const all = await events('');
    expect(all.length).toBeGreaterThan(10);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await search(`limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.events.length).toBeLessThanOrEqual(3);
      seen.push(...res.body.events.map((e) => e.id));
      cursor = res.body.nextCursor;
      // A change made while paging is newer than every page's rows: it shifts nothing.
      if (pages++ === 1) await ok(p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'late-squad' }));
    } while (cursor);
    expect(seen).toEqual(all.map((e) => e.id));
    expect(new Set(seen).size).toBe(seen.length);
    expect(pages).toBe(Math.ceil(all.length / 3));

    // Filters hold across pages too.
    const keyPages: string[] = [];
    let next: string | null = null;
    do {
      const res = await search(`action=key.*&limit=1${next ? `&cursor=${next}` : ''}`);
      keyPages.push(...res.body.events.map((e) => e.action));
      next = res.body.nextCursor;
    } while (next);
    expect(keyPages.sort()).toEqual(['key.created', 'key.created', 'key.created', 'key.revoked']);
  });

  it('should keep the plain-array route for existing clients, with the same filters', async () => {
    const res = await p.admin<Row[]>('GET', `/v1/orgs/${orgId}/audit?limit=2&action=key.*`);
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.map((e) => e.id)).toEqual((await events('action=key.*')).slice(0, 2).map((e) => e.id));
  });

  it.each([
    ['cursor=not-a-cursor', 'cursor'],
    [`cursor=${Buffer.from('a1|12|nope').toString('base64url')}`, 'cursor'],
    // A forged cursor past 9999-12-31 (`+033658-…` as ISO) is refused here, not by Postgres as a 500.
    [
      `cursor=${Buffer.from(`a1|999999999999999|${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`).toString('base64url')}`,
      'cursor',
    ],
    ['from=2026-02-30', 'from'],
    // Postgres has no year 0, and nothing was recorded before 1970.
    ['from=0000-01-01', 'from'],
    ['from=1969-12-31', 'from'],
    ['to=0000-01-01', 'to'],
    ['from=11/03/2026', 'from'],
    ['to=2026-13-01', 'to'],
    ['from=2026-03-11&to=2026-03-10', 'to'],
    ['action=key.**', 'action'],
    ['action=key created', 'action'],
    ['action=a&action=b', 'action'],
    ['actor=ada lovelace', 'actor'],
    ['targetType=%00', 'targetType'],
    ['targetType=team%0A', 'targetType'],
    // NUL cannot be sent to Postgres as text; no id or name in the trail holds a control character.
    ['targetId=%00', 'targetId'],
    ['targetId=abc%0Adef', 'targetId'],
    ['targetId=abc%7F', 'targetId'],
    ['actor=bootstrap%00', 'actor'],
    ['action=key.created%0A', 'action'],
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['sort=asc', 'sort'],
  ])('should answer 400 naming the field for %s', async (query, field) => {
    const res = await search(query);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect((res.body as unknown as { field: string }).field).toBe(field);
  });

  it('should never show another organization’s events', async () => {
    expect(await events(`targetId=${ids.otherTeam}`)).toEqual([]);
    expect((await events('')).every((e) => e.orgId === orgId)).toBe(true);
    // Grace's token reaching for the other org: not found, as for any org that is not hers.
    expect((await p.admin('GET', `/v1/orgs/${otherOrgId}/audit/search`, undefined, tokens.grace)).status).toBe(404);
    expect((await p.admin('GET', `/v1/orgs/${otherOrgId}/audit/facets`, undefined, tokens.grace)).status).toBe(404);
    const other = await p.admin('GET', `/v1/orgs/${otherOrgId}/audit/facets`);
    expect(other.body.actions).toContain('team.created');
    expect(other.body.actions).not.toContain('key.created');
    expect(other.body.actors.map((a: { id: string }) => a.id)).not.toContain(ids.grace);
  });

  it('should let finance read the trail and its facets, and refuse a member', async () => {
    const fin = await search('action=team.*', tokens.finance);
    expect(fin.status).toBe(200);
    expect(fin.body.events.length).toBeGreaterThan(0);
    const facets = await p.admin('GET', `/v1/orgs/${orgId}/audit/facets`, undefined, tokens.finance);
    expect(facets.status).toBe(200);
    expect(facets.body.actions).toEqual(expect.arrayContaining(['key.created', 'key.revoked', 'team.updated']));
    expect(facets.body.targetTypes).toEqual(expect.arrayContaining(['team', 'virtual-key']));
    expect(facets.body.actors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: ids.grace, actor: expect.objectContaining({ tokenName: 'grace laptop' }) }),
        expect.objectContaining({ id: 'bootstrap' }),
      ]),
    );
    const member = await search('', tokens.member);
    expect(member.status).toBe(403);
    expect((await p.admin('GET', `/v1/orgs/${orgId}/audit/facets`, undefined, tokens.member)).status).toBe(403);
    expect((await p.admin('GET', `/v1/orgs/${orgId}/audit`, undefined, tokens.member)).status).toBe(403);
  });
});
