import { createHash, randomBytes } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { Redis } from 'ioredis';
import { sweepExpiredOAuthState } from '@tollgate/oauth-server';
import { bullPrefix } from '@tollgate/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/oauth-test-client';
import { RunningPlatform, startPlatform } from '../support/platform';

const HOSTILE_REGISTRATIONS = 10_000;
const PER_SOURCE_PER_HOUR = 20;
const CONCURRENCY = 16;

/**
 * Every key under the test's Redis prefix with its size in bytes (MEMORY USAGE), but the BullMQ
 * queues' own (the worker's repeatable jobs add keys on their schedule whatever the test does).
 */
async function redisFootprint(redis: Redis, prefix: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const k of keys)
      if (!k.startsWith(`${bullPrefix(prefix)}:`)) sizes.set(k, Number(await redis.memory('USAGE', k)) || 0);
  } while (cursor !== '0');
  return sizes;
}

/** The hostile mix the red team sent: huge names, thousands of redirect URIs, plain http, and plain floods. */
function hostileMetadata(i: number): Record<string, unknown> {
  const base = { grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none' };
  if (i % 100 === 1) return { ...base, client_name: 'x'.repeat(900_000), redirect_uris: ['http://127.0.0.1:1/cb'] };
  if (i % 100 === 2)
    return {
      ...base,
      client_name: 'many',
      redirect_uris: Array.from({ length: 5000 }, (_, n) => `https://evil.example/${n}`),
    };
  if (i % 100 === 3) return { ...base, client_name: 'plain', redirect_uris: ['http://evil.example/callback'] };
  return { ...base, client_name: `flood ${i}`, redirect_uris: ['http://127.0.0.1:1/callback'] };
}

describe('dynamic client registration under a flood', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let redis: Redis;
  let adminUrl: string;

  beforeAll(async () => {
    const [adminPort, edgePort] = [await freePort(), await freePort()];
    adminUrl = `http://127.0.0.1:${adminPort}`;
    p = await startPlatform({
      ADMIN_PORT: String(adminPort),
      EDGE_PORT: String(edgePort),
      ADMIN_PUBLIC_URL: adminUrl,
      EDGE_PUBLIC_URL: `http://127.0.0.1:${edgePort}`,
      OAUTH_REGISTRATIONS_PER_SOURCE_PER_HOUR: String(PER_SOURCE_PER_HOUR),
    });
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    redis = new Redis(p.env.redisUrl);
  });

  afterAll(async () => {
    redis?.disconnect();
    await db?.$disconnect();
    await p?.close();
  });

  async function register(body: unknown): Promise<{ status: number; body: any; retryAfter: string | null }> {
    const res = await fetch(`${adminUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, retryAfter: res.headers.get('retry-after') };
  }

  it('should keep 10,000 hostile registrations out of Redis entirely and store only the per-source allowance in Postgres', async () => {
    const redisBefore = await redisFootprint(redis, p.env.redisPrefix);
    const rowsBefore = await db.oAuthClient.count();
    const [{ bytes: bytesBefore }] = await db.$queryRaw<{ bytes: bigint }[]>`
      SELECT pg_total_relation_size('"OAuthClient"') AS bytes`;

    const statuses = new Map<string, number>();
    let next = 0;
    let sampleTooMany: { retryAfter: string | null; body: any } | undefined;
    const worker = async () => {
      while (next < HOSTILE_REGISTRATIONS) {
        const i = next++;
        const res = await register(hostileMetadata(i));
        const label = `${res.status} ${res.body?.error ?? 'ok'}`;
        statuses.set(label, (statuses.get(label) ?? 0) + 1);
        if (res.status === 429) sampleTooMany ??= res;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    // The oversized and plain-http ones are refused by their metadata, the flood by the limit.
    expect(statuses.get('400 invalid_client_metadata')).toBe(2 * (HOSTILE_REGISTRATIONS / 100));
    expect(statuses.get('400 invalid_redirect_uri')).toBe(HOSTILE_REGISTRATIONS / 100);
    expect(statuses.get('201 ok')).toBe(PER_SOURCE_PER_HOUR);
    expect(statuses.get('429 too_many_requests')).toBe(HOSTILE_REGISTRATIONS * 0.97 - PER_SOURCE_PER_HOUR);
    expect(Number(sampleTooMany?.retryAfter)).toBeGreaterThan(0);
    expect(sampleTooMany?.body.error_description).toMatch(/registrations per hour from one address/);

    // Redis: not one key or byte more under the deployment's prefix.
    const redisAfter = await redisFootprint(redis, p.env.redisPrefix);
    const added = [...redisAfter.keys()].filter((k) => !redisBefore.has(k));
    expect(added).toEqual([]);
    const bytes = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    expect(bytes(redisAfter) - bytes(redisBefore)).toBeLessThanOrEqual(0);

    // Postgres: the allowance only, and a bounded number of bytes.
    expect((await db.oAuthClient.count()) - rowsBefore).toBe(PER_SOURCE_PER_HOUR);
    const [{ bytes: bytesAfter }] = await db.$queryRaw<{ bytes: bigint }[]>`
      SELECT pg_total_relation_size('"OAuthClient"') AS bytes`;
    expect(Number(bytesAfter - bytesBefore)).toBeLessThan(256 * 1024);
  }, 600_000);

  it('should refuse a registered client once it expired unused, and the sweep should delete it', async () => {
    const client = await db.oAuthClient.findFirstOrThrow({ where: { usedAt: null } });
    expect(client.expiresAt!.getTime()).toBeGreaterThan(Date.now());
    await db.oAuthClient.update({
      where: { clientId: client.clientId },
      data: { expiresAt: new Date(Date.now() - 1) },
    });
    const res = await fetch(authorizeUrl(client.clientId, 'http://127.0.0.1:1/callback'), { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('invalid_client');
    expect(await sweepExpiredOAuthState(db)).toBeGreaterThanOrEqual(1);
    expect(await db.oAuthClient.findUnique({ where: { clientId: client.clientId } })).toBeNull();
  });

  it('should accept a loopback redirect on any port (RFC 8252 §7.3) but not another path or host', async () => {
    const client = await db.oAuthClient.findFirstOrThrow({ where: { usedAt: null, expiresAt: { gt: new Date() } } });
    for (const redirect of ['http://127.0.0.1:1/callback', 'http://127.0.0.1:54321/callback']) {
      const res = await fetch(authorizeUrl(client.clientId, redirect), { redirect: 'manual' });
      expect(res.status, redirect).toBe(303);
      expect(res.headers.get('location')).toMatch(/^\/oauth\/interaction\//);
    }
    for (const redirect of ['http://127.0.0.1:54321/elsewhere', 'http://localhost.evil.example:1/callback']) {
      const res = await fetch(authorizeUrl(client.clientId, redirect), { redirect: 'manual' });
      expect(res.status, redirect).toBe(400);
      expect(await res.text()).toContain('redirect_uri');
    }
  });

  function authorizeUrl(clientId: string, redirectUri: string): string {
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(`${adminUrl}/oauth/authorize`);
    url.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: redirectUri,
      scope: 'mcp',
      state: 's',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      resource: `${p.env.vars.EDGE_PUBLIC_URL}/mcp`,
    }).toString();
    return url.href;
  }
});
