import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { QueueName } from '@tollgate/queue';
import { waitForJobs, testBullOptions } from '@tollgate/testing';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';

// The platform allows only 127.0.0.2, which stands for a public host here; the rest of loopback
// (127.0.0.1, where an "internal service" listens) is refused as it is by default.
const OUTSIDE_HOST = '127.0.0.2';
const INTERNAL_TEXT = 'INTERNAL-ONLY root:x:0:0 admin console';

function listen(server: http.Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as AddressInfo).port));
  });
}

describe('Outbound requests on a tenant’s behalf (SSRF)', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let orgId: string;
  let userId: string;
  let memberToken: string;
  let internal: http.Server;
  let outside: http.Server;
  let internalPort: number;
  let outsideUrl: string;
  const internalHits: string[] = [];

  beforeAll(async () => {
    internal = http.createServer((req, res) => {
      internalHits.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(INTERNAL_TEXT);
    });
    internalPort = await listen(internal, '127.0.0.1');
    // An allowed host that misbehaves: an error page with internal text, redirects to loopback.
    outside = http.createServer((req, res) => {
      const path = req.url ?? '/';
      if (path.startsWith('/broken')) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        return res.end(INTERNAL_TEXT);
      }
      if (path.startsWith('/redirect')) {
        res.writeHead(307, { location: `http://127.0.0.1:${internalPort}${path}` });
        return res.end();
      }
      // Protected-resource metadata naming an "authorization server" on loopback.
      if (path.startsWith('/.well-known/oauth-protected-resource')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            resource: `${outsideUrl}/oauth/mcp`,
            authorization_servers: [`http://127.0.0.1:${internalPort}`],
          }),
        );
      }
      res.writeHead(404);
      res.end();
    });
    outsideUrl = `http://${OUTSIDE_HOST}:${await listen(outside, OUTSIDE_HOST)}`;

    p = await startPlatform({
      OUTBOUND_ALLOW_CIDRS: `${OUTSIDE_HOST}/32`,
      ADMIN_PUBLIC_URL: 'http://tollgate-admin.test',
      // A failing upstream's syncs are retried after 100 ms and 200 ms (the default: 2 s and 4 s).
      SYNC_RETRY_DELAY_MS: '100',
    });
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Acme', slug: 'acme' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'mia@acme.test' })).body.id;
    const member = await p.admin('POST', '/v1/admin-tokens', { role: 'MEMBER', orgId, userId, name: 'mia' });
    expect(member.status).toBe(201);
    memberToken = member.body.secret;
  });

  afterAll(async () => {
    await db?.$disconnect();
    await p?.close();
    await Promise.allSettled([new Promise((r) => internal?.close(r)), new Promise((r) => outside?.close(r))]);
  });

  /** Every queued sync of the upstream (registration, schedule, admin), waited for; failures included. */
  async function syncsSettled(upstreamId: string): Promise<void> {
    const queue = new Queue(QueueName.CatalogSync, testBullOptions(p.env.redisUrl, p.env.redisPrefix));
    try {
      const jobs = (await queue.getJobs(['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed'])).filter(
        (j) => j?.data?.upstreamId === upstreamId,
      );
      // The schedule's next run (an hour away) is not waited for; a failed attempt's retry is.
      const due = [];
      for (const j of jobs) if (!((await j.getState()) === 'delayed' && j.attemptsMade === 0)) due.push(j);
      await Promise.all(
        due.map((j) =>
          waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [j.id!]).catch(() => undefined),
        ),
      );
    } finally {
      await queue.close();
    }
  }

  async function register(namespace: string, url: string, extra: Record<string, unknown> = {}) {
    return p.admin('POST', `/v1/orgs/${orgId}/upstreams`, { namespace, transport: 'STREAMABLE_HTTP', url, ...extra });
  }

  it.each([
    ['loopback', () => `http://127.0.0.1:${internalPort}/mcp`, '127.0.0.1 is a loopback address'],
    [
      'localhost',
      () => `http://localhost:${internalPort}/mcp`,
      /localhost resolves to (127\.0\.0\.1|::1), a loopback address/,
    ],
    ['IPv6 loopback', () => `http://[::1]:${internalPort}/mcp`, '::1 is a loopback address'],
    [
      'IPv4-mapped loopback',
      () => `http://[::ffff:127.0.0.1]:${internalPort}/mcp`,
      '::ffff:7f00:1 is a loopback address',
    ],
    ['a private address', () => 'http://10.0.0.1/mcp', '10.0.0.1 is a private address'],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
    ['a unique-local address', () => 'http://[fd00::1]/mcp', 'fd00::1 is a unique-local address'],
    ['the unspecified address', () => `http://0.0.0.0:${internalPort}/mcp`, '0.0.0.0 is an unspecified address'],
  ])('should answer 400 naming url and the rule when an upstream is registered at %s', async (_kind, url, message) => {
    const res = await register('internal', url());
    expect(res.status).toBe(400);
    expect(res.body.field).toBe('url');
    expect(res.body.message).toMatch(message);
    expect(res.body.message).toContain('OUTBOUND_ADDRESS_REFUSED');
    expect(res.body.message).toContain('OUTBOUND_ALLOW_CIDRS');
    expect((await p.admin('GET', `/v1/orgs/${orgId}/upstreams`)).body).toEqual([]);
    expect(internalHits).toEqual([]);
  });

  it('should refuse credentials in an upstream URL and store nothing of them', async () => {
    const res = await register('creds', `http://svc-user:s3cret-pass@${OUTSIDE_HOST}/mcp`);
    expect(res.status).toBe(400);
    expect(res.body.field).toBe('url');
    expect(res.body.message).toContain('must not contain credentials');
    expect(JSON.stringify(res.body)).not.toContain('s3cret-pass');
    const rows = await db.upstreamServer.findMany({ where: { orgId } });
    expect(JSON.stringify(rows)).not.toContain('s3cret-pass');
  });

  it.each([
    ['loopback', () => `http://127.0.0.1:${internalPort}/hook`, '127.0.0.1 is a loopback address'],
    ['cloud metadata', () => 'http://169.254.169.254/hook', '169.254.169.254 is a link-local address'],
  ])('should answer 400 naming url and the rule when an alert webhook is at %s', async (_kind, url, message) => {
    const res = await p.admin('POST', `/v1/orgs/${orgId}/alert-webhooks`, { url: url() });
    expect(res.status).toBe(400);
    expect(res.body.field).toBe('url');
    expect(res.body.message).toContain(message);
    expect(res.body.message).toContain('OUTBOUND_ADDRESS_REFUSED');
  });

  it('should show a member only a classified sync error, never the text an upstream answered', async () => {
    const res = await register('broken', `${outsideUrl}/broken/mcp`);
    expect(res.status).toBe(201);
    await syncsSettled(res.body.id);
    const seen = await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${res.body.id}`, undefined, memberToken);
    expect(seen.status).toBe(200);
    expect(seen.body.lastSyncError).toBe('the upstream answered HTTP 500');
    expect(JSON.stringify(seen.body)).not.toContain('INTERNAL-ONLY');
    // Tried three times, with the deployment's retry delay.
    const queue = new Queue(QueueName.CatalogSync, testBullOptions(p.env.redisUrl, p.env.redisPrefix));
    const failed = (await queue.getJobs(['failed'])).filter((j) => j?.data?.upstreamId === res.body.id);
    await queue.close();
    expect(failed.map((j) => [j.attemptsMade, j.opts.backoff])).toContainEqual([
      3,
      { type: 'exponential', delay: 100 },
    ]);
  });

  it('should refuse at sync time a name that now resolves to loopback, and say so', async () => {
    const res = await register('rebound', `${outsideUrl}/broken/mcp`);
    expect(res.status).toBe(201);
    await syncsSettled(res.body.id);
    // As if the name's DNS answer changed after registration (rebinding): the row now names localhost.
    await db.upstreamServer.update({
      where: { id: res.body.id },
      data: { url: `http://localhost:${internalPort}/mcp` },
    });
    expect((await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${res.body.id}/sync`)).status).toBe(202);
    await syncsSettled(res.body.id);
    const seen = await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${res.body.id}`, undefined, memberToken);
    expect(seen.body.lastSyncError).toMatch(
      /^localhost resolves to (127\.0\.0\.1|::1), a loopback address: .*OUTBOUND_ADDRESS_REFUSED.*OUTBOUND_ALLOW_CIDRS/,
    );
    expect(internalHits).toEqual([]);
    // The rule would refuse a retry the same way: the admin's sync is tried once, not three times.
    const queue = new Queue(QueueName.CatalogSync, testBullOptions(p.env.redisUrl, p.env.redisPrefix));
    const failed = (await queue.getJobs(['failed'])).filter((j) => j?.data?.upstreamId === res.body.id);
    await queue.close();
    expect(failed.map((j) => [j.data.trigger, j.attemptsMade])).toContainEqual(['admin', 1]);
  });

  it('should not follow an upstream’s redirect to loopback', async () => {
    const res = await register('redirecting', `${outsideUrl}/redirect/mcp`);
    expect(res.status).toBe(201);
    await syncsSettled(res.body.id);
    const seen = await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${res.body.id}`, undefined, memberToken);
    expect(seen.body.lastSyncError).toBeTruthy();
    expect(seen.body.lastSyncError).not.toContain('INTERNAL-ONLY');
    expect(internalHits).toEqual([]);
  });

  it('should refuse OAuth discovery and client registration at an authorization server on loopback, naming the rule', async () => {
    const res = await register('oauth', `${outsideUrl}/oauth/mcp`, { authMode: 'PER_USER_OAUTH' });
    expect(res.status).toBe(201);
    const started = await p.admin('POST', `/v1/orgs/${orgId}/users/${userId}/connections/${res.body.id}`);
    expect(started.status).toBe(502);
    expect(started.body.message).toContain('127.0.0.1 is a loopback address');
    expect(started.body.message).toContain('OUTBOUND_ADDRESS_REFUSED');
    expect(internalHits).toEqual([]);
  });
});
