import { INestApplication } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { loadAdminConfig } from '@tollgate/config';
import { refuseAuditRows } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp } from '../../apps/admin-api/src/admin-app';
import {
  AuthorizationServer,
  authorizeInBrowser,
  startAuthorizationServer,
} from '../fixtures/oauth-authorization-server';
import { freePort } from '../support/oauth-test-client';
import { RunningPlatform, startPlatform } from '../support/platform';

const CALLBACK = '/v1/auth/sso/callback';
const DAY = new Date().toISOString().slice(0, 10);
const SPEND = `reports/spend?from=${DAY}&to=${DAY}&groupBy=team`;

/** One person's browser against the admin API: a cookie jar, no redirects followed by itself. */
class CookieBrowser {
  readonly cookies = new Map<string, string>();
  readonly setCookieHeaders: string[] = [];

  constructor(private readonly baseUrl: string) {}

  async request(
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: unknown; base?: string } = {},
  ): Promise<{ status: number; body: any; headers: Headers }> {
    const res = await fetch(`${init.base ?? this.baseUrl}${path}`, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        ...(this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...init.headers,
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    for (const c of res.headers.getSetCookie()) {
      this.setCookieHeaders.push(c);
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      const [name, value] = [pair.slice(0, i), pair.slice(i + 1)];
      if (/Max-Age=0/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body, headers: res.headers };
  }

  /** Signs in at the identity provider as `sub`; returns the callback's answer (303 to returnTo when it worked). */
  async signIn(startPath: string, sub: string) {
    const start = await this.request(startPath);
    expect(start.status, JSON.stringify(start.body)).toBe(302);
    const callback = await authorizeInBrowser(start.headers.get('location')!, sub, `${this.baseUrl}${CALLBACK}`);
    return this.request(`${callback.pathname}${callback.search}`);
  }

  get session(): string | undefined {
    return this.cookies.get('tollgate_session');
  }
}

describe('single sign-on into the admin API', () => {
  let p: RunningPlatform;
  let idp: AuthorizationServer;
  let adminUrl: string;
  let orgId: string;
  let otherOrgId: string;
  let platformTeam: string;
  const users: Record<string, string> = {};
  const secrets: string[] = [];
  const logged: string[] = [];
  const realWrites = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  let secondAdmin: INestApplication | undefined;

  beforeAll(async () => {
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => (
      logged.push(String(chunk)),
      realWrites.out(chunk, ...rest)
    )) as never;
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => (
      logged.push(String(chunk)),
      realWrites.err(chunk, ...rest)
    )) as never;
    const adminPort = await freePort();
    adminUrl = `http://127.0.0.1:${adminPort}`;
    idp = await startAuthorizationServer();
    const register = async () =>
      (await (
        await fetch(`${idp.issuer}/reg`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            redirect_uris: [`${adminUrl}${CALLBACK}`],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_basic',
          }),
        })
      ).json()) as { client_id: string; client_secret: string };
    const orgClient = await register();
    const platformClient = await register();
    secrets.push(orgClient.client_secret, platformClient.client_secret);
    p = await startPlatform({
      ADMIN_PORT: String(adminPort),
      ADMIN_PUBLIC_URL: adminUrl,
      LOG_LEVEL: 'verbose',
      PLATFORM_SSO_ISSUER: idp.issuer,
      PLATFORM_SSO_CLIENT_ID: platformClient.client_id,
      PLATFORM_SSO_CLIENT_SECRET: platformClient.client_secret,
      PLATFORM_SSO_ADMIN_EMAILS: 'ops@tollgate.test',
    });
    secrets.push(p.adminToken);

    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Acme', slug: 'acme' })).body.id;
    otherOrgId = (await p.admin('POST', '/v1/orgs', { name: 'Globex', slug: 'globex' })).body.id;
    platformTeam = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'platform' })).body.id;
    const research = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'research' })).body.id;
    for (const [name, email] of Object.entries({
      finance: 'fin@acme.test',
      orgAdmin: 'boss@acme.test',
      teamAdmin: 'lead@acme.test',
      member: 'dev@acme.test',
      leaver: 'leaver@acme.test',
    })) {
      users[name] = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email })).body.id;
    }
    expect(
      (await p.admin('POST', `/v1/orgs/${orgId}/teams/${research}/members`, { userId: users.finance })).status,
    ).toBe(201);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/teams/${platformTeam}/members`, {
          userId: users.teamAdmin,
          isTeamAdmin: true,
        })
      ).status,
    ).toBe(201);
    expect(
      (await p.admin('POST', `/v1/orgs/${orgId}/teams/${platformTeam}/members`, { userId: users.member })).status,
    ).toBe(201);
    expect(
      (await p.admin('POST', `/v1/orgs/${orgId}/teams/${platformTeam}/members`, { userId: users.leaver })).status,
    ).toBe(201);
    expect(
      await p.admin('PUT', `/v1/orgs/${orgId}/users/${users.finance}/org-role`, { role: 'FINANCE' }),
    ).toMatchObject({ status: 200, body: { role: 'FINANCE' } });
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/users/${users.orgAdmin}/org-role`, { role: 'ORG_ADMIN' })).status,
    ).toBe(200);
    // The users list carries each person's org role (the console's people page reads it there).
    const listed = (await p.admin('GET', `/v1/orgs/${orgId}/users`)).body as { id: string; orgRole: string | null }[];
    expect(listed.find((u) => u.id === users.finance)?.orgRole).toBe('FINANCE');
    expect(listed.find((u) => u.id === users.orgAdmin)?.orgRole).toBe('ORG_ADMIN');
    expect(listed.find((u) => u.id === users.leaver)?.orgRole).toBeNull();

    const put = await p.admin('PUT', `/v1/orgs/${orgId}/identity-provider`, {
      issuer: idp.issuer,
      clientId: orgClient.client_id,
      clientSecret: orgClient.client_secret,
      createUsers: true,
      newUserTeamId: platformTeam,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({
      sessionRedirectUri: `${adminUrl}${CALLBACK}`,
      createUsers: true,
      newUserTeamId: platformTeam,
    });
  });

  afterAll(async () => {
    process.stdout.write = realWrites.out as never;
    process.stderr.write = realWrites.err as never;
    await secondAdmin?.close();
    await p?.close();
    await idp?.close();
  });

  it('should let a finance person signed in by SSO read spend reports with the cookie but change nothing', async () => {
    const browser = new CookieBrowser(adminUrl);
    const done = await browser.signIn('/v1/auth/sso/acme/start?returnTo=/console/reports', 'fin@acme.test');
    expect(done.status, JSON.stringify(done.body)).toBe(303);
    expect(done.headers.get('location')).toBe('/console/reports');
    const cookie = browser.setCookieHeaders.find((c) => c.startsWith('tollgate_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Secure/); // plain http here; https public URLs get Secure and __Host-
    secrets.push(browser.session!);

    const me = await browser.request('/v1/auth/session');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      user: { id: users.finance, email: 'fin@acme.test' },
      orgId,
      roles: ['FINANCE', 'MEMBER'],
      role: 'FINANCE',
      platformAdmin: false,
      via: 'org-sso',
    });
    secrets.push(me.body.csrfToken);

    expect((await browser.request(`/v1/orgs/${orgId}/${SPEND}`)).status).toBe(200);
    expect((await browser.request(`/v1/orgs/${orgId}/audit`)).status).toBe(200);
    const change = await browser.request(`/v1/orgs/${orgId}/teams`, {
      method: 'POST',
      body: { name: 'sneaky' },
      headers: { 'x-csrf-token': me.body.csrfToken },
    });
    expect(change.status).toBe(403);
    expect(change.body.message).toMatch(/^role FINANCE may not change this/);
    // Another organisation does not exist for this person.
    expect((await browser.request(`/v1/orgs/${otherOrgId}/${SPEND}`)).status).toBe(404);
  });

  it('should refuse a cookie-authenticated change without the CSRF token, and take it with the token', async () => {
    const browser = new CookieBrowser(adminUrl);
    expect((await browser.signIn('/v1/auth/sso/acme/start', 'boss@acme.test')).headers.get('location')).toBe(
      '/console/',
    );
    const me = await browser.request('/v1/auth/session');
    expect(me.body).toMatchObject({ roles: ['ORG_ADMIN'], role: 'ORG_ADMIN', orgId });

    const without = await browser.request(`/v1/orgs/${orgId}/teams`, { method: 'POST', body: { name: 'ops' } });
    expect(without.status).toBe(403);
    expect(without.body.message).toMatch(/x-csrf-token/);
    const wrong = await browser.request(`/v1/orgs/${orgId}/teams`, {
      method: 'POST',
      body: { name: 'ops' },
      headers: { 'x-csrf-token': 'x'.repeat(32) },
    });
    expect(wrong.status).toBe(403);
    expect((await p.admin('GET', `/v1/orgs/${orgId}/teams`)).body.map((t: { name: string }) => t.name)).not.toContain(
      'ops',
    );

    const made = await browser.request(`/v1/orgs/${orgId}/teams`, {
      method: 'POST',
      body: { name: 'ops' },
      headers: { 'x-csrf-token': me.body.csrfToken },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    // The change is audited under the person and the session, not a token.
    const audit = await p.admin('GET', `/v1/orgs/${orgId}/audit`);
    const row = (audit.body.items ?? audit.body).find(
      (e: { action: string; targetId: string }) => e.targetId === made.body.id,
    );
    expect(row.actorId).toMatch(/^session:/);
  });

  it('should give a team admin the team admin role and keep spend and audit from them', async () => {
    const browser = new CookieBrowser(adminUrl);
    await browser.signIn('/v1/auth/sso/acme/start', 'lead@acme.test');
    const me = await browser.request('/v1/auth/session');
    expect(me.body).toMatchObject({ roles: ['TEAM_ADMIN', 'MEMBER'], role: 'TEAM_ADMIN', teamId: platformTeam });
    expect((await browser.request(`/v1/orgs/${orgId}/teams`)).status).toBe(200);
    expect((await browser.request(`/v1/orgs/${orgId}/audit`)).status).toBe(403);
  });

  it('should end the session on every replica at logout', async () => {
    const browser = new CookieBrowser(adminUrl);
    await browser.signIn('/v1/auth/sso/acme/start', 'dev@acme.test');
    const me = await browser.request('/v1/auth/session');
    expect(me.body).toMatchObject({ roles: ['MEMBER'], role: 'MEMBER', user: { id: users.member } });

    secondAdmin = await createAdminApp(loadAdminConfig(p.env.vars));
    await secondAdmin.listen(0, '127.0.0.1');
    const second = (await secondAdmin.getUrl()).replace('[::1]', '127.0.0.1');
    expect((await browser.request('/v1/auth/session', { base: second })).status).toBe(200);

    const sessionCookie = browser.session!;
    expect((await browser.request('/v1/auth/logout', { method: 'POST' })).status).toBe(403);
    expect(
      (await browser.request('/v1/auth/logout', { method: 'POST', headers: { 'x-csrf-token': me.body.csrfToken } }))
        .status,
    ).toBe(204);
    expect(browser.session).toBeUndefined();
    // The old cookie, replayed, is dead on both replicas.
    browser.cookies.set('tollgate_session', sessionCookie);
    const after = await browser.request('/v1/auth/session', { base: second });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    expect((await browser.request('/v1/auth/session')).status).toBe(401);
  });

  it('should stop the session of a person who is offboarded or loses their last role', async () => {
    const leaver = new CookieBrowser(adminUrl);
    await leaver.signIn('/v1/auth/sso/acme/start', 'leaver@acme.test');
    expect((await leaver.request('/v1/auth/session')).status).toBe(200);
    const off = await p.admin('POST', `/v1/orgs/${orgId}/users/${users.leaver}/offboard`, {});
    expect(off.status, JSON.stringify(off.body)).toBeLessThan(300);
    expect((await leaver.request(`/v1/orgs/${orgId}/teams`)).status).toBe(401);
    // And cannot sign in again.
    const again = await new CookieBrowser(adminUrl).signIn('/v1/auth/sso/acme/start', 'leaver@acme.test');
    expect(again.status).toBe(403);
    expect(again.body.message).toMatch(/offboarded/);

    // Finance loses the org role and its only team: no role left, the session stops.
    const fin = new CookieBrowser(adminUrl);
    await fin.signIn('/v1/auth/sso/acme/start', 'fin@acme.test');
    expect((await fin.request(`/v1/orgs/${orgId}/${SPEND}`)).status).toBe(200);
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/users/${users.finance}/org-role`, { role: null })).body,
    ).toMatchObject({ role: null });
    expect((await fin.request('/v1/auth/session')).body).toMatchObject({ roles: ['MEMBER'], role: 'MEMBER' });
    // A member reads only their own calls.
    expect((await fin.request(`/v1/orgs/${orgId}/${SPEND}`)).body.scope).toEqual({ kind: 'user', id: users.finance });
    const research = (await p.admin('GET', `/v1/orgs/${orgId}/teams`)).body.find(
      (t: { name: string }) => t.name === 'research',
    ).id;
    expect(
      (await p.admin('DELETE', `/v1/orgs/${orgId}/teams/${research}/members/${users.finance}`)).status,
    ).toBeLessThan(300);
    expect((await fin.request('/v1/auth/session')).status).toBe(401);
  });

  it('should create no person on first sign-in when their audit row cannot be written', async () => {
    const db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    try {
      const allowAudit = await refuseAuditRows(db, 'user.created-on-sign-in');
      let refused;
      try {
        refused = await new CookieBrowser(adminUrl).signIn('/v1/auth/sso/acme/start', 'unaudited@acme.test');
      } finally {
        await allowAudit();
      }
      expect(refused.status).toBe(500);
      expect(await db.user.count({ where: { orgId, email: 'unaudited@acme.test' } })).toBe(0);
      // Nothing half-made blocks the person: the next sign-in creates them, with their row.
      expect((await new CookieBrowser(adminUrl).signIn('/v1/auth/sso/acme/start', 'unaudited@acme.test')).status).toBe(
        303,
      );
      expect(await db.user.count({ where: { orgId, email: 'unaudited@acme.test' } })).toBe(1);
    } finally {
      await db.$disconnect();
    }
  });

  it('should create a person unknown to Tollgate on first sign-in as a member of the chosen team', async () => {
    const browser = new CookieBrowser(adminUrl);
    expect((await browser.signIn('/v1/auth/sso/acme/start', 'newbie@acme.test')).status).toBe(303);
    const me = await browser.request('/v1/auth/session');
    expect(me.body).toMatchObject({ user: { email: 'newbie@acme.test' }, roles: ['MEMBER'], teamId: platformTeam });
    const members = await p.admin('GET', `/v1/orgs/${orgId}/teams/${platformTeam}/members`);
    expect(JSON.stringify(members.body)).toContain(me.body.user.id);
    const audit = await p.admin('GET', `/v1/orgs/${orgId}/audit`);
    expect((audit.body.items ?? audit.body).map((e: { action: string }) => e.action)).toContain(
      'user.created-on-sign-in',
    );

    // With creation off, a stranger is refused.
    const conn = (await p.admin('GET', `/v1/orgs/${orgId}/identity-provider`)).body;
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/identity-provider`, { issuer: conn.issuer, clientId: conn.clientId }))
        .body,
    ).toMatchObject({ createUsers: false });
    const stranger = await new CookieBrowser(adminUrl).signIn('/v1/auth/sso/acme/start', 'stranger@acme.test');
    expect(stranger.status).toBe(403);
    expect(stranger.body.message).toMatch(/No Tollgate user of your organisation has the email stranger@acme.test/);
  });

  it('should answer bad sign-in requests with 4xx, never 500', async () => {
    const browser = new CookieBrowser(adminUrl);
    expect(await browser.request('/v1/auth/sso/nope/start')).toMatchObject({ status: 404 });
    expect((await browser.request(`/v1/auth/sso/${otherOrgId}/start`)).status).toBe(404); // no IdP
    expect((await browser.request('/v1/auth/sso/acme/start?returnTo=//evil.test/')).body).toMatchObject({
      statusCode: 400,
      field: 'returnTo',
    });
    expect((await browser.request('/v1/auth/sso/acme/start?returnTo=https://evil.test/')).status).toBe(400);
    expect((await browser.request(`${CALLBACK}?state=abc`)).body).toMatchObject({ statusCode: 400, field: 'code' });
    expect((await browser.request(`${CALLBACK}?state=made-up&code=x`)).body.message).toMatch(
      /unknown, used or expired/,
    );
    expect((await browser.request(`${CALLBACK}?error=access_denied`)).status).toBe(400);

    // The provider's answer replayed in another browser (no binding cookie) is refused, and used up.
    const start = await browser.request('/v1/auth/sso/acme/start');
    const callback = await authorizeInBrowser(
      start.headers.get('location')!,
      'boss@acme.test',
      `${adminUrl}${CALLBACK}`,
    );
    const elsewhere = await new CookieBrowser(adminUrl).request(`${callback.pathname}${callback.search}`);
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.message).toMatch(/another browser/);
    expect((await browser.request(`${callback.pathname}${callback.search}`)).status).toBe(400);

    // A made-up or malformed cookie is a 401.
    const forged = new CookieBrowser(adminUrl);
    forged.cookies.set('tollgate_session', 'A'.repeat(43));
    expect((await forged.request('/v1/auth/session')).status).toBe(401);
    forged.cookies.set('tollgate_session', '%%%');
    expect((await forged.request('/v1/auth/session')).status).toBe(401);
    expect((await forged.request('/v1/auth/session', { method: 'POST', body: { token: 42 } })).body).toMatchObject({
      statusCode: 400,
      field: 'token',
    });
  });

  it('should open a platform admin session with the bootstrap token or the platform IdP, and keep bearer tokens working', async () => {
    const browser = new CookieBrowser(adminUrl);
    expect(
      (await browser.request('/v1/auth/session', { method: 'POST', body: { token: 'not-the-bootstrap-token-at-all' } }))
        .status,
    ).toBe(401);
    const opened = await browser.request('/v1/auth/session', { method: 'POST', body: { token: p.adminToken } });
    expect(opened.status).toBe(201);
    expect(opened.body).toMatchObject({
      user: null,
      orgId: null,
      roles: ['PLATFORM_ADMIN'],
      platformAdmin: true,
      via: 'bootstrap-token',
    });
    expect(JSON.stringify(opened.body)).not.toContain(p.adminToken);
    secrets.push(browser.session!);
    expect((await browser.request('/v1/orgs')).status).toBe(200);
    expect(
      (
        await browser.request(`/v1/orgs/${otherOrgId}/teams`, {
          method: 'POST',
          body: { name: 'x' },
          headers: { 'x-csrf-token': opened.body.csrfToken },
        })
      ).status,
    ).toBe(201);

    const ops = new CookieBrowser(adminUrl);
    expect((await ops.signIn('/v1/auth/platform-sso/start', 'ops@tollgate.test')).status).toBe(303);
    expect((await ops.request('/v1/auth/session')).body).toMatchObject({
      platformAdmin: true,
      via: 'platform-sso',
      roles: ['PLATFORM_ADMIN'],
    });
    const intruder = await new CookieBrowser(adminUrl).signIn('/v1/auth/platform-sso/start', 'boss@acme.test');
    expect(intruder.status).toBe(403);

    // Bearer tokens: the bootstrap token and an org admin token, with no CSRF token and a cookie beside them.
    const token = (await p.admin('POST', '/v1/admin-tokens', { role: 'ORG_ADMIN', orgId, name: 'automation' })).body
      .secret as string;
    secrets.push(token);
    const bearer = await browser.request(`/v1/orgs/${orgId}/teams`, {
      method: 'POST',
      body: { name: 'by-token' },
      headers: { authorization: `Bearer ${token}` },
    });
    expect(bearer.status).toBe(201);
    expect(
      (await browser.request('/v1/auth/session', { headers: { authorization: `Bearer ${token}` } })).body,
    ).toMatchObject({ via: 'bearer', roles: ['ORG_ADMIN'], csrfToken: null });
    expect((await browser.request('/v1/auth/session', { headers: { authorization: 'Bearer tga_wrong' } })).status).toBe(
      401,
    );
  });

  it('should write no session cookie, CSRF token, client secret or token to the logs', () => {
    const all = logged.join('');
    expect(all).toContain('session.signed-in');
    for (const secret of secrets.filter(Boolean)) expect(all).not.toContain(secret);
  });
});
