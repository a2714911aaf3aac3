import type { INestApplication } from '@nestjs/common';
import { loadAdminConfig } from '@tollgate/config';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp } from '../../apps/admin-api/src/admin-app';

interface Listed {
  id: string;
  name: string;
  teamId: string;
  userId: string;
  tags: string[];
  revokedAt: string | null;
}

interface Page {
  keys: Listed[];
  total: number;
  offset: number;
  limit: number;
  tags: string[];
  names: { id: string; name: string }[];
}

/**
 * The key list a console pages through (GET …/keys/page): the API filters, counts and pages, so a
 * screen never reads every key of a large organisation. Compared with the whole list (GET …/keys).
 */
describe('a page of keys: search, tag, revoked keys, paging and reach', () => {
  let env: TestEnv;
  let app: INestApplication;
  let orgId: string;
  const ids: Record<string, string> = {};
  let teamAdminToken: string;
  const http = () => request(app.getHttpServer());
  const platform = { Authorization: '' };

  async function page(query: Record<string, string | number | boolean>, token = env.adminToken): Promise<Page> {
    const res = await http()
      .get(`/v1/orgs/${orgId}/keys/page`)
      .query(query)
      .set({ Authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    return res.body as Page;
  }

  beforeAll(async () => {
    env = await createTestEnv({});
    app = await createAdminApp(loadAdminConfig(env.vars));
    platform.Authorization = `Bearer ${env.adminToken}`;
    const post = async (path: string, body: Record<string, unknown>) => {
      const res = await http().post(path).set(platform).send(body);
      expect(res.status).toBe(201);
      return res.body;
    };
    orgId = (await post('/v1/orgs', { name: 'Paged', slug: 'paged' })).id;
    ids.web = (await post(`/v1/orgs/${orgId}/teams`, { name: 'Web Frontends' })).id;
    ids.data = (await post(`/v1/orgs/${orgId}/teams`, { name: 'data' })).id;
    ids.ada = (await post(`/v1/orgs/${orgId}/users`, { email: 'ada@paged.test', name: 'Ada Lovelace' })).id;
    ids.bob = (await post(`/v1/orgs/${orgId}/users`, { email: 'bob@paged.test' })).id;
    await post(`/v1/orgs/${orgId}/teams/${ids.web}/members`, { userId: ids.ada, isTeamAdmin: true });
    await post(`/v1/orgs/${orgId}/teams/${ids.data}/members`, { userId: ids.bob });
    const key = async (name: string, team: string, user: string, tags: string[]) =>
      (await post(`/v1/orgs/${orgId}/keys`, { teamId: ids[team], userId: ids[user], name, tags })).key.id as string;
    for (let i = 1; i <= 5; i++) await key(`web-agent-${i}`, 'web', 'ada', i % 2 ? ['prod', 'web'] : ['staging']);
    await key('etl', 'data', 'bob', ['prod']);
    await key('notebook', 'data', 'bob', []);
    const gone = await key('retired', 'data', 'bob', ['legacy']);
    expect((await http().post(`/v1/orgs/${orgId}/keys/${gone}/revoke`).set(platform)).status).toBe(200);
    const token = await http()
      .post('/v1/admin-tokens')
      .set(platform)
      .send({ orgId, role: 'TEAM_ADMIN', teamId: ids.web, userId: ids.ada, name: 'web admin' });
    expect(token.status).toBe(201);
    teamAdminToken = token.body.secret;
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  it('should page through exactly the usable keys the whole list has, in its order', async () => {
    const all = (await http().get(`/v1/orgs/${orgId}/keys`).set(platform)).body as Listed[];
    const usable = all.filter((k) => !k.revokedAt).map((k) => k.id);
    const seen: string[] = [];
    for (let offset = 0; ; offset += 3) {
      const p = await page({ limit: 3, offset });
      expect(p.total).toBe(usable.length);
      seen.push(...p.keys.map((k) => k.id));
      if (p.keys.length < 3) break;
    }
    expect(seen).toEqual(usable);
    // Every tag within reach (the revoked key's too), and the names of the page's teams and owners.
    const first = await page({ limit: 3 });
    expect(first.tags).toEqual(['legacy', 'prod', 'staging', 'web']);
    expect(new Map(first.names.map((n) => [n.id, n.name]))).toEqual(
      new Map([
        [ids.web, 'Web Frontends'],
        [ids.ada, 'Ada Lovelace'],
      ]),
    );
  });

  it('should search names, tags, team names and owners without regard to case, and filter by tag', async () => {
    const names = async (query: Record<string, string | boolean>) =>
      (await page({ limit: 50, ...query })).keys.map((k) => k.name).sort();
    expect(await names({ search: 'ETL' })).toEqual(['etl']);
    expect(await names({ search: 'frontends' })).toEqual([1, 2, 3, 4, 5].map((i) => `web-agent-${i}`));
    expect(await names({ search: 'BOB@paged' })).toEqual(['etl', 'notebook']);
    expect(await names({ search: 'lovelace' })).toHaveLength(5);
    expect(await names({ search: 'staging' })).toEqual(['web-agent-2', 'web-agent-4']);
    expect(await names({ tag: 'prod' })).toEqual(['etl', 'web-agent-1', 'web-agent-3', 'web-agent-5']);
    expect(await names({ tag: 'prod', search: 'data' })).toEqual(['etl']);
    expect(await names({ search: 'retired' })).toEqual([]);
    expect(await names({ search: 'retired', inactive: true })).toEqual(['retired']);
    expect((await page({ search: 'no such key' })).total).toBe(0);
  });

  it('should give a team admin only its team’s keys and tags', async () => {
    const p = await page({ limit: 50 }, teamAdminToken);
    expect(p.total).toBe(5);
    expect(new Set(p.keys.map((k) => k.teamId))).toEqual(new Set([ids.web]));
    expect(p.tags).toEqual(['prod', 'staging', 'web']);
    expect((await page({ search: 'etl' }, teamAdminToken)).total).toBe(0);
  });

  it('should refuse a page size or start out of range, naming the field', async () => {
    for (const [query, field] of [
      [{ limit: 0 }, 'limit'],
      [{ limit: 201 }, 'limit'],
      [{ offset: -1 }, 'offset'],
      [{ inactive: 'maybe' }, 'inactive'],
      [{ sort: 'secretHash:asc' }, 'sort'],
      [{ sort: 'name:up' }, 'sort'],
    ] as const) {
      const res = await http().get(`/v1/orgs/${orgId}/keys/page`).query(query).set(platform);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain(field);
    }
  });

  it('should sort the whole list before paging when asked, so pages continue one order', async () => {
    const paged = async (sort: string) => {
      const seen: string[] = [];
      for (let offset = 0; ; offset += 3) {
        const p = await page({ limit: 3, offset, sort });
        seen.push(...p.keys.map((k) => k.name));
        if (p.keys.length < 3) break;
      }
      return seen;
    };
    const usable = ['etl', 'notebook', ...[1, 2, 3, 4, 5].map((i) => `web-agent-${i}`)];
    expect(await paged('name:desc')).toEqual([...usable].sort().reverse());
    // Team by name as the database orders text (its collation: capitals first, so Web Frontends before data),
    // ties oldest first.
    const web = [1, 2, 3, 4, 5].map((i) => `web-agent-${i}`);
    expect(await paged('team:asc')).toEqual([...web, 'etl', 'notebook']);
    expect(await paged('team:desc')).toEqual(['etl', 'notebook', ...web]);
    // Owner by name: Bob has none (his email stands for it) and comes after Ada Lovelace either way.
    expect((await paged('owner:desc')).slice(-2)).toEqual(['etl', 'notebook']);
  });
});
