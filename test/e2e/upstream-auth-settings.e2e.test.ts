import type { IncomingMessage } from 'node:http';
import { QueueName } from '@tollgate/queue';
import { waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

/** An upstream's auth settings changed after registration: validated, audited, secrets write-only. */
describe('upstream auth settings (PATCH)', () => {
  let p: RunningPlatform;
  let fixture: FixtureServer;
  let orgId: string;
  let upstreamId: string;
  const seen: string[] = [];

  const patch = (body: unknown) => p.admin('PATCH', `/v1/orgs/${orgId}/upstreams/${upstreamId}`, body);
  /** Everything an admin can read about the upstream: its view and its audit trail. */
  const readable = async () =>
    JSON.stringify([
      (await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${upstreamId}`)).body,
      (await p.admin('GET', `/v1/orgs/${orgId}/audit/search?targetId=${upstreamId}&limit=500`)).body,
    ]);

  beforeAll(async () => {
    p = await startPlatform({ OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' });
    fixture = await startFixtureServer(undefined, {
      intercept: (req: IncomingMessage) => {
        seen.push(String(req.headers.authorization ?? ''));
        return false;
      },
    });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Authy', slug: 'authy' })).body.id;
    const up = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'au',
      transport: 'STREAMABLE_HTTP',
      url: fixture.url,
    });
    expect(up.body.authMode).toBe('NONE');
    upstreamId = up.body.id;
  });

  afterAll(async () => {
    await p?.close();
    await fixture?.close();
  });

  it('should refuse an auth change that cannot work with a 400 naming the field, and change nothing', async () => {
    const cases: [unknown, string][] = [
      [{ authMode: 'KERBEROS' }, 'authMode'],
      [{ authMode: 'STATIC_SECRET' }, 'bearerToken'], // a static secret needs one
      [{ oauth: { clientId: 'c1' } }, 'oauth'], // not a PER_USER_OAUTH upstream
      [{ authMode: 'PER_USER_OAUTH', oauth: { clientSecret: 42 } }, 'oauth.clientSecret'],
      [{ authMode: 'PER_USER_OAUTH', oauth: { scope: '' } }, 'oauth.scope'],
    ];
    for (const [body, field] of cases) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.field ?? JSON.stringify(res.body), JSON.stringify(body)).toContain(field);
    }
    const after = (await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${upstreamId}`)).body;
    expect([after.authMode, after.version]).toEqual(['NONE', 1]);
  });

  it('should move NONE -> STATIC_SECRET -> PER_USER_OAUTH -> NONE, audited, the secrets never readable again', async () => {
    const toStatic = await patch({ authMode: 'STATIC_SECRET', bearerToken: 'sekret-static-1' });
    expect(toStatic.status, JSON.stringify(toStatic.body)).toBe(200);
    expect(toStatic.body).toMatchObject({ authMode: 'STATIC_SECRET', headerNames: ['Authorization'], oauth: null });
    // The next sync reaches the upstream with the new secret.
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    expect(seen).toContain('Bearer sekret-static-1');

    // NONE while a secret is still set: refused (it would be sent anyway).
    const stillSecret = await patch({ authMode: 'NONE' });
    expect([stillSecret.status, stillSecret.body.field]).toEqual([400, 'authMode']);

    const toOAuth = await patch({
      authMode: 'PER_USER_OAUTH',
      bearerToken: null,
      oauth: { clientId: 'tollgate-at-authy', clientSecret: 'sekret-client-2', scope: 'read write' },
    });
    expect(toOAuth.status, JSON.stringify(toOAuth.body)).toBe(200);
    expect(toOAuth.body).toMatchObject({
      authMode: 'PER_USER_OAUTH',
      headerNames: [],
      oauth: { clientId: 'tollgate-at-authy', registered: false, scope: 'read write' },
    });
    // A new scope alone keeps the client and its secret.
    const scoped = await patch({ oauth: { scope: 'read' } });
    expect(scoped.body.oauth).toEqual({ clientId: 'tollgate-at-authy', registered: false, scope: 'read' });

    const toNone = await patch({ authMode: 'NONE' });
    expect(toNone.status, JSON.stringify(toNone.body)).toBe(200);
    expect(toNone.body).toMatchObject({ authMode: 'NONE', oauth: null });

    // Audited, each change named; no secret value anywhere an admin can read.
    const trail = (
      await p.admin('GET', `/v1/orgs/${orgId}/audit/search?targetId=${upstreamId}&action=upstream.updated`)
    ).body.events as { details: { changed: string[]; authMode?: string } }[];
    expect(trail.map((e) => e.details.changed).reverse()).toEqual([
      ['authMode', 'bearerToken'],
      ['authMode', 'bearerToken', 'oauth.clientId', 'oauth.clientSecret', 'oauth.scope'],
      ['oauth.scope'],
      ['authMode'],
    ]);
    expect(trail.map((e) => e.details.authMode).reverse()).toEqual([
      'STATIC_SECRET',
      'PER_USER_OAUTH',
      'PER_USER_OAUTH',
      'NONE',
    ]);
    const everything = await readable();
    expect(everything).not.toContain('sekret-static-1');
    expect(everything).not.toContain('sekret-client-2');
  });
});
