import type { INestApplication } from '@nestjs/common';
import { loadAdminConfig } from '@tollgate/config';
import { createTestEnv, TestEnv } from '@tollgate/testing';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp } from '../../apps/admin-api/src/admin-app';

describe('admin API, bad input and role wording', () => {
  let env: TestEnv;
  let app: INestApplication;
  let orgId: string;
  let teamId: string;
  let plainMemberId: string;

  const http = () => request(app.getHttpServer());
  const platform = () => ({ Authorization: `Bearer ${env.adminToken}` });
  const postJson = (path: string, text: string, method: 'post' | 'put' = 'post') =>
    http()[method](path).set(platform()).set('Content-Type', 'application/json').send(text);

  beforeAll(async () => {
    env = await createTestEnv();
    app = await createAdminApp(loadAdminConfig(env.vars));
    const org = await http().post('/v1/orgs').set(platform()).send({ name: 'Badco', slug: 'badco' });
    orgId = org.body.id;
    teamId = (await http().post(`/v1/orgs/${orgId}/teams`).set(platform()).send({ name: 'ops' })).body.id;
    plainMemberId = (await http().post(`/v1/orgs/${orgId}/users`).set(platform()).send({ email: 'pat@badco.test' }))
      .body.id;
    await http().post(`/v1/orgs/${orgId}/teams/${teamId}/members`).set(platform()).send({ userId: plainMemberId });
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  describe('text Postgres cannot store', () => {
    it('should answer 400 naming the field when a text field holds a NUL byte', async () => {
      const res = await postJson('/v1/orgs', JSON.stringify({ name: 'a\u0000b', slug: 'nul-org' }));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        field: 'name',
        code: 'VALIDATION_FAILED',
        message: expect.stringContaining('NUL'),
      });
    });

    it('should answer 400 naming the field when a text field holds a lone surrogate', async () => {
      const res = await postJson(
        `/v1/orgs/${orgId}/users`,
        JSON.stringify({ email: 'x@badco.test', name: 'Ada \ud800' }),
      );
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ field: 'name', message: expect.stringContaining('unpaired surrogate') });
    });

    it('should name the JSON path of a bad string inside an array', async () => {
      const res = await postJson(
        `/v1/orgs/${orgId}/policies/ORG/${orgId}`,
        JSON.stringify({ allow: ['docs:*', 'x\u0000'], deny: [] }),
        'put',
      );
      expect(res.status).toBe(400);
      expect(res.body.field).toBe('allow[1]');
    });

    it('should answer 400 naming the parameter when a query string or a path holds a NUL byte', async () => {
      const query = await http().get('/v1/oauth/callback?state=ab%00cd&code=x');
      expect(query.status).toBe(400);
      expect(query.body).toMatchObject({ field: 'state', message: expect.stringContaining('NUL') });
      const param = await http()
        .put(`/v1/orgs/${orgId}/policies/OR%00G/${orgId}`)
        .set(platform())
        .send({ allow: [], deny: [] });
      expect(param.status).toBe(400);
      expect(param.body.field).toBe('scope');
    });
  });

  describe('shape', () => {
    it('should answer 400 when a body is nested 100,000 levels deep, and keep answering', async () => {
      const res = await postJson('/v1/orgs', `{"name":${'['.repeat(100_000)}${']'.repeat(100_000)},"slug":"deep"}`);
      expect(res.status).toBe(400);
      expect(res.body.field).toMatch(/^name(\[0\])+$/);
      expect(res.body.message).toContain('nested deeper than 32 levels');
      expect((await http().get('/healthz')).status).toBe(200);
    });

    it('should answer 413 naming the body when it is over 1 MB', async () => {
      const res = await postJson('/v1/orgs', JSON.stringify({ name: 'x'.repeat(1_100_000), slug: 'big' }));
      expect(res.status).toBe(413);
      expect(res.body.field).toBe('body');
    });
  });

  describe('explicit null', () => {
    it.each([
      ['/v1/orgs', () => ({ name: 'n', slug: 'null-tz', timeZone: null }), 'timeZone'],
      ['/v1/orgs', () => ({ name: 'n', slug: 'null-auto', autoApproveTools: null }), 'autoApproveTools'],
      [
        () => `/v1/orgs/${orgId}/prices`,
        () => ({ perCallMicros: 1, perOutputTokenMicros: null }),
        'perOutputTokenMicros',
      ],
      [() => `/v1/orgs/${orgId}/users`, () => ({ email: 'nn@badco.test', name: null }), 'name'],
      [
        () => `/v1/orgs/${orgId}/keys`,
        () => ({ teamId, userId: plainMemberId, name: 'k', expiresAt: null }),
        'expiresAt',
      ],
    ])('should answer 400 naming the field when an optional field is null (%#)', async (path, body, field) => {
      const res = await http()
        .post(typeof path === 'string' ? path : path())
        .set(platform())
        .send(body());
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ field, message: `${field} must not be null; omit it to leave it unset` });
    });

    it('should answer 400 naming alertThresholds when it is null', async () => {
      const res = await http()
        .put(`/v1/orgs/${orgId}/budgets`)
        .set(platform())
        .send({ scope: 'ORG', scopeId: orgId, period: 'MONTH', limitMicros: 1_000_000, alertThresholds: null });
      expect(res.status).toBe(400);
      expect(res.body.field).toBe('alertThresholds');
    });

    it('should take null as "not set" where the schema says nullable (a policy PUT)', async () => {
      const res = await http().put(`/v1/orgs/${orgId}/policies/ORG/${orgId}`).set(platform()).send({
        allow: [],
        deny: [],
        autoExecute: null,
        disclosureMode: null,
        maxAnswerTokens: null,
        outputTokenCap: null,
        outputOverflow: null,
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ autoExecute: [], disclosureMode: null, maxAnswerTokens: null });
    });
  });

  describe('time zones', () => {
    it.each(['UTC+25', 'UTC+2', '+05:00', 'EST', 'europe/paris'])(
      'should answer 400 naming timeZone for %j',
      async (timeZone) => {
        const res = await http().post('/v1/orgs').set(platform()).send({ name: 'tz', slug: 'tz-bad', timeZone });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ field: 'timeZone', message: expect.stringContaining('IANA time zone') });
      },
    );

    it('should accept IANA names', async () => {
      for (const [slug, timeZone] of [
        ['tz-paris', 'Europe/Paris'],
        ['tz-utc', 'UTC'],
        ['tz-ba', 'America/Argentina/Buenos_Aires'],
      ]) {
        const res = await http().post('/v1/orgs').set(platform()).send({ name: 'tz', slug, timeZone });
        expect(res.status).toBe(201);
        expect(res.body.timeZone).toBe(timeZone);
      }
    });
  });

  describe('query and path parameters of every read route', () => {
    it('should answer every hostile query or path value of a GET route of the served spec below 500', async () => {
      const spec = (await http().get('/docs-json')).body as {
        paths: Record<string, { get?: { parameters?: { name: string; in: string }[] } }>;
      };
      const hostile = [
        '%00',
        'a%00b',
        '%ED%A0%80',
        '1e400',
        '-1',
        '99999999999999999999999',
        'NaN',
        'x'.repeat(3000),
        '%E0%A4%A',
        'null',
        '[]',
        '2026-13-45',
      ];
      const paths: string[] = [];
      for (const [template, ops] of Object.entries(spec.paths)) {
        const params = ops.get?.parameters ?? [];
        const real = template.replace('{orgId}', orgId).replace('{teamId}', teamId).replace('{userId}', plainMemberId);
        for (const param of params)
          for (const value of hostile)
            paths.push(
              param.in === 'path'
                ? template
                    .replace(`{${param.name}}`, value)
                    .replace('{orgId}', orgId)
                    .replace(/\{[^}]+\}/g, '6f1c7a52-4f0e-4a8e-9d57-1b1f0f7d8e21')
                : `${real.replace(/\{[^}]+\}/g, '6f1c7a52-4f0e-4a8e-9d57-1b1f0f7d8e21')}?${param.name}=${value}&${param.name}[x]=${value}`,
            );
      }
      // Four requests at a time: the API answers each on its own, and the run stays bounded as routes are added.
      const seen: number[] = [];
      const next = paths.entries();
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          for (const [, path] of next) {
            const res = await http().get(path).set(platform());
            seen.push(res.status);
            expect(res.status, `GET ${path.slice(0, 200)}`).toBeLessThan(500);
          }
        }),
      );
      expect(seen.length).toBe(paths.length);
      expect(seen.length).toBeGreaterThan(100);
    }, 180_000); // every GET parameter of the served spec times 12 values: about 1,000 requests
  });

  describe('headers', () => {
    it.each([
      'Bearer ' + 'x'.repeat(8_000),
      'Bearer tga_\u00ff\u00e9',
      'Bearer',
      'Bearer  a b',
      'Basic YTpi',
      'tga_abc',
      'Bearer %00',
    ])('should answer 401, never 500, to the Authorization header %#', async (authorization) => {
      const res = await http().get('/v1/orgs').set('Authorization', authorization);
      expect(res.status).toBe(401);
    });

    it("should answer 431 to headers over Node's limit and keep serving", async () => {
      const res = await http().get('/v1/orgs').set('X-Request-Id', 'r'.repeat(20_000)).set(platform());
      expect(res.status).toBe(431);
      expect((await http().get('/healthz')).status).toBe(200);
    });
  });

  describe('roles', () => {
    it('should refuse a TEAM_ADMIN token for a member whose membership is not a team admin', async () => {
      const res = await http()
        .post('/v1/admin-tokens')
        .set(platform())
        .send({ role: 'TEAM_ADMIN', orgId, teamId, userId: plainMemberId, name: 'not-an-admin' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ field: 'userId', message: expect.stringContaining('not its team admin') });

      await http()
        .post(`/v1/orgs/${orgId}/teams/${teamId}/members`)
        .set(platform())
        .send({ userId: plainMemberId, isTeamAdmin: true })
        .expect(201);
      const granted = await http()
        .post('/v1/admin-tokens')
        .set(platform())
        .send({ role: 'TEAM_ADMIN', orgId, teamId, userId: plainMemberId, name: 'now-an-admin' });
      expect(granted.status).toBe(201);
    });

    it('should tell finance it may not read an org-admin-only list, and may not change what it asks to change', async () => {
      const finance = (
        await http().post('/v1/admin-tokens').set(platform()).send({ role: 'FINANCE', orgId, name: 'books' })
      ).body.secret as string;
      const read = await http()
        .get(`/v1/orgs/${orgId}/connections`)
        .set({ Authorization: `Bearer ${finance}` });
      expect(read.status).toBe(403);
      expect(read.body.message).toMatch(/^role FINANCE may not read this; it needs ORG_ADMIN/);
      const write = await http()
        .post(`/v1/orgs/${orgId}/teams`)
        .set({ Authorization: `Bearer ${finance}` })
        .send({ name: 'x' });
      expect(write.status).toBe(403);
      expect(write.body.message).toMatch(/^role FINANCE may not change this/);
    });
  });
});
