import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { INestApplication } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { loadAdminConfig } from '@tollgate/config';
import type { AuditAction } from '@tollgate/audit';
import { createTestEnv, refuseAuditRows, TestEnv } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createAdminApp } from '../../apps/admin-api/src/admin-app';

/**
 * What the audit trail holds. A change and its audit row commit together: with the audit insert
 * refused by Postgres (a trigger in this test's database, not a mock), the change is not there
 * either, and the caller is told so. The organisation as a target has one spelling.
 */
describe('audit trail writes', () => {
  let env: TestEnv;
  let app: INestApplication;
  let url: string;
  let db: PrismaClient;
  let orgId: string;
  let teamId: string;
  let userId: string;
  let keyId: string;

  const admin = async <T = any>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${env.adminToken}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  const ok = async <T = any>(method: string, path: string, body?: unknown, status = 201): Promise<T> => {
    const res = await admin<T>(method, path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    return res.body;
  };
  const auditRows = (action: string) => db.auditEvent.count({ where: { orgId, action } });

  /** Postgres refuses every audit row of these actions until `allowAudit`. */
  let allowAudit = async () => {};
  const refuseAudit = async (...actions: AuditAction[]) => {
    allowAudit = await refuseAuditRows(db, ...actions);
  };

  beforeAll(async () => {
    env = await createTestEnv();
    app = await createAdminApp(loadAdminConfig(env.vars));
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: env.vars.DATABASE_URL }) });
    orgId = (await ok<{ id: string }>('POST', '/v1/orgs', { name: 'Atomic', slug: 'atomic' })).id;
    teamId = (await ok<{ id: string }>('POST', `/v1/orgs/${orgId}/teams`, { name: 'web' })).id;
    userId = (await ok<{ id: string }>('POST', `/v1/orgs/${orgId}/users`, { email: 'ada@atomic.test' })).id;
    await ok('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    keyId = (await ok<{ key: { id: string } }>('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'kept' })).key
      .id;
  });

  afterAll(async () => {
    await db?.$disconnect();
    await app?.close();
    await env?.cleanup();
  });

  it('should not create a key when its audit row cannot be written', async () => {
    await refuseAudit('key.created');
    try {
      const res = await admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'unaudited' });
      expect(res.status).toBe(500);
      expect(JSON.stringify(res.body)).not.toContain('refused by the test');
    } finally {
      await allowAudit();
    }
    const keys = await ok<{ name: string }[]>('GET', `/v1/orgs/${orgId}/keys`, undefined, 200);
    expect(keys.map((k) => k.name)).toEqual(['kept']);
    expect(await auditRows('key.created')).toBe(1);
  });

  it('should leave a key live when its revocation cannot be audited', async () => {
    await refuseAudit('key.revoked');
    try {
      expect((await admin('POST', `/v1/orgs/${orgId}/keys/${keyId}/revoke`)).status).toBe(500);
    } finally {
      await allowAudit();
    }
    expect(
      (await ok<{ revokedAt: string | null }>('GET', `/v1/orgs/${orgId}/keys/${keyId}`, undefined, 200)).revokedAt,
    ).toBeNull();
    expect(await auditRows('key.revoked')).toBe(0);
  });

  it('should keep a key’s limits and role grants unchanged when their audit rows cannot be written', async () => {
    await refuseAudit('budget.created', 'rate-limit.created', 'user.org-role-set', 'admin-token.created');
    try {
      const budget = { period: 'MONTH', limitMicros: 5_000_000, mode: 'HARD' };
      expect((await admin('PUT', `/v1/orgs/${orgId}/keys/${keyId}/budget`, budget)).status).toBe(500);
      const limit = { toolPattern: '*:*', windowSeconds: 60, callsPerWindow: 10 };
      expect((await admin('POST', `/v1/orgs/${orgId}/keys/${keyId}/rate-limits`, limit)).status).toBe(500);
      expect((await admin('PUT', `/v1/orgs/${orgId}/users/${userId}/org-role`, { role: 'ORG_ADMIN' })).status).toBe(
        500,
      );
      const token = { role: 'ORG_ADMIN', orgId, name: 'unaudited token' };
      expect((await admin('POST', '/v1/admin-tokens', token)).status).toBe(500);
    } finally {
      await allowAudit();
    }
    const limits = await ok<{ budgets: unknown[]; rateLimits: unknown[] }>(
      'GET',
      `/v1/orgs/${orgId}/keys/${keyId}/limits`,
      undefined,
      200,
    );
    expect(limits).toMatchObject({ budgets: [], rateLimits: [] });
    expect(
      (await ok<{ role: string | null }>('GET', `/v1/orgs/${orgId}/users/${userId}/org-role`, undefined, 200)).role,
    ).toBeNull();
    const tokens = await ok<{ name: string }[]>('GET', `/v1/admin-tokens?orgId=${orgId}`, undefined, 200);
    expect(tokens.map((t) => t.name)).not.toContain('unaudited token');
  });

  it('should leave teams, people and the organisation unchanged when their audit rows cannot be written', async () => {
    await refuseAudit('team.created', 'team.member-removed', 'user.updated', 'org.updated');
    try {
      expect((await admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'unaudited' })).status).toBe(500);
      expect((await admin('DELETE', `/v1/orgs/${orgId}/teams/${teamId}/members/${userId}`)).status).toBe(500);
      expect((await admin('PATCH', `/v1/orgs/${orgId}/users/${userId}`, { name: 'Unaudited' })).status).toBe(500);
      expect((await admin('PATCH', `/v1/orgs/${orgId}`, { timeZone: 'Asia/Tokyo' })).status).toBe(500);
    } finally {
      await allowAudit();
    }
    const teams = await ok<{ name: string }[]>('GET', `/v1/orgs/${orgId}/teams`, undefined, 200);
    expect(teams.map((t) => t.name)).toEqual(['web']);
    const members = await ok<{ userId: string }[]>('GET', `/v1/orgs/${orgId}/teams/${teamId}/members`, undefined, 200);
    expect(members.map((m) => m.userId)).toEqual([userId]);
    expect(
      (await ok<{ name: string | null }>('GET', `/v1/orgs/${orgId}/users/${userId}`, undefined, 200)).name,
    ).toBeNull();
    expect((await ok<{ timeZone: string }>('GET', `/v1/orgs/${orgId}`, undefined, 200)).timeZone).toBe('UTC');
  });

  it('should leave policies, prices and webhooks unchanged when their audit rows cannot be written', async () => {
    await refuseAudit('policy.updated', 'price-rule.created', 'alert-webhook.created');
    try {
      const policy = { allow: ['*:*'], deny: [] };
      expect((await admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, policy)).status).toBe(500);
      expect((await admin('POST', `/v1/orgs/${orgId}/prices`, { toolPattern: '*', perCallMicros: 1000 })).status).toBe(
        500,
      );
      const hook = { url: 'http://127.0.0.1:9/hook' };
      expect((await admin('POST', `/v1/orgs/${orgId}/alert-webhooks`, hook)).status).toBe(500);
    } finally {
      await allowAudit();
    }
    expect(await ok<unknown[]>('GET', `/v1/orgs/${orgId}/policies`, undefined, 200)).toEqual([]);
    expect(await ok<unknown[]>('GET', `/v1/orgs/${orgId}/prices`, undefined, 200)).toEqual([]);
    expect(await ok<unknown[]>('GET', `/v1/orgs/${orgId}/alert-webhooks`, undefined, 200)).toEqual([]);
  });

  it('should keep an email domain claimed when its release cannot be audited, and release it once it can', async () => {
    await ok('PUT', `/v1/orgs/${orgId}/email-domains/atomic.test`);
    await refuseAudit('org.email-domain-released');
    try {
      expect((await admin('DELETE', `/v1/orgs/${orgId}/email-domains/atomic.test`)).status).toBe(500);
    } finally {
      await allowAudit();
    }
    const claimed = await ok<{ domain: string }[]>('GET', `/v1/orgs/${orgId}/email-domains`, undefined, 200);
    expect(claimed.map((c) => c.domain)).toEqual(['atomic.test']);
    expect((await admin('DELETE', `/v1/orgs/${orgId}/email-domains/atomic.test`)).status).toBe(204);
    expect(await auditRows('org.email-domain-released')).toBe(1);
  });

  it('should register no upstream and change no exposure when their audit rows cannot be written', async () => {
    const stdio = { transport: 'STDIO', command: 'node', args: ['--version'] };
    await refuseAudit('upstream.created');
    try {
      expect((await admin('POST', `/v1/orgs/${orgId}/upstreams`, { namespace: 'unaudited', ...stdio })).status).toBe(
        500,
      );
    } finally {
      await allowAudit();
    }
    const upstreams = await ok<{ namespace: string }[]>('GET', `/v1/orgs/${orgId}/upstreams`, undefined, 200);
    expect(upstreams.map((u) => u.namespace)).not.toContain('unaudited');

    const upstream = await ok<{ id: string }>('POST', `/v1/orgs/${orgId}/upstreams`, { namespace: 'kept', ...stdio });
    await refuseAudit('upstream.exposure-changed');
    try {
      const exposure = { exposeUnprefixed: true };
      expect((await admin('PUT', `/v1/orgs/${orgId}/upstreams/${upstream.id}/exposure`, exposure)).status).toBe(500);
    } finally {
      await allowAudit();
    }
    const after = await ok<{ exposeUnprefixed: boolean }>(
      'GET',
      `/v1/orgs/${orgId}/upstreams/${upstream.id}`,
      undefined,
      200,
    );
    expect(after.exposeUnprefixed).toBe(false);
    expect(await auditRows('upstream.created')).toBe(1);
  });

  it('should claim no email domain when the claim cannot be audited', async () => {
    await refuseAudit('org.email-domain-claimed');
    try {
      expect((await admin('PUT', `/v1/orgs/${orgId}/email-domains/unaudited.test`)).status).toBe(500);
    } finally {
      await allowAudit();
    }
    const claimed = await ok<{ domain: string }[]>('GET', `/v1/orgs/${orgId}/email-domains`, undefined, 200);
    expect(claimed.map((c) => c.domain)).not.toContain('unaudited.test');
    expect((await admin('PUT', `/v1/orgs/${orgId}/email-domains/unaudited.test`)).status).toBe(201);
    expect((await admin('PUT', `/v1/orgs/${orgId}/email-domains/unaudited.test`)).status).toBe(200);
    const rows = await db.auditEvent.count({
      where: { orgId, action: 'org.email-domain-claimed', details: { path: ['domain'], equals: 'unaudited.test' } },
    });
    expect(rows).toBe(1);
  });

  it('should keep a person’s sign-in code, keys and teams when their new code or offboarding cannot be audited', async () => {
    const grace = (await ok<{ id: string }>('POST', `/v1/orgs/${orgId}/users`, { email: 'grace@atomic.test' })).id;
    await ok('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId: grace });
    const graceKey = (
      await ok<{ key: { id: string } }>('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId: grace, name: 'grace' })
    ).key.id;
    await ok('POST', `/v1/orgs/${orgId}/users/${grace}/sign-in-codes`, {});
    const redis = new Redis(env.vars.REDIS_URL);
    try {
      const [codeOf] = await scanKeys(redis, `*sign-in-code-of*${grace}*`);
      const issued = await redis.get(codeOf);
      await refuseAudit('user.sign-in-code-issued', 'user.offboarded');
      try {
        expect((await admin('POST', `/v1/orgs/${orgId}/users/${grace}/sign-in-codes`, {})).status).toBe(500);
        expect((await admin('POST', `/v1/orgs/${orgId}/users/${grace}/offboard`)).status).toBe(500);
      } finally {
        await allowAudit();
      }
      // The code issued before still stands: the refused issue stored none, and offboarding voided nothing.
      expect(await redis.get(codeOf)).toBe(issued);
    } finally {
      redis.disconnect();
    }
    const user = await ok<{ offboardedAt: string | null }>('GET', `/v1/orgs/${orgId}/users/${grace}`, undefined, 200);
    expect(user.offboardedAt).toBeNull();
    const key = await ok<{ revokedAt: string | null }>('GET', `/v1/orgs/${orgId}/keys/${graceKey}`, undefined, 200);
    expect(key.revokedAt).toBeNull();
    const members = await ok<{ userId: string }[]>('GET', `/v1/orgs/${orgId}/teams/${teamId}/members`, undefined, 200);
    expect(members.map((m) => m.userId)).toContain(grace);
    expect(await auditRows('user.sign-in-code-issued')).toBe(1);
    expect(await auditRows('user.offboarded')).toBe(0);

    const done = await ok<{ revokedKeyIds: string[] }>(
      'POST',
      `/v1/orgs/${orgId}/users/${grace}/offboard`,
      undefined,
      200,
    );
    expect(done.revokedKeyIds).toEqual([graceKey]);
    expect(await auditRows('user.offboarded')).toBe(1);
  });

  it('should commit the change and its row together once the audit row can be written', async () => {
    await ok('POST', `/v1/orgs/${orgId}/keys/${keyId}/revoke`, undefined, 200);
    await ok('PUT', `/v1/orgs/${orgId}/users/${userId}/org-role`, { role: 'FINANCE' }, 200);
    expect(await auditRows('key.revoked')).toBe(1);
    expect(await auditRows('user.org-role-set')).toBe(1);
  });

  it('should find the organisation’s rows under one target type, by its former spelling `org` too', async () => {
    // A row as the identity provider routes wrote it before the spelling was merged, then the migration.
    await db.auditEvent.create({
      data: { orgId, actorId: 'bootstrap', action: 'identity-provider.set', targetType: 'org', targetId: orgId },
    });
    const migration = path.resolve(
      __dirname,
      '../../prisma/migrations/20261228040000_audit_organization_target/migration.sql',
    );
    await db.$executeRawUnsafe(await readFile(migration, 'utf8'));
    await ok('PATCH', `/v1/orgs/${orgId}`, { name: 'Atomic Ltd' }, 200);

    const byType = async (targetType: string) =>
      (
        await ok<{ events: { id: string; action: string; targetType: string }[] }>(
          'GET',
          `/v1/orgs/${orgId}/audit/search?targetType=${targetType}`,
          undefined,
          200,
        )
      ).events;
    const merged = await byType('organization');
    expect(merged.map((e) => e.action)).toEqual(expect.arrayContaining(['org.updated', 'identity-provider.set']));
    expect(new Set(merged.map((e) => e.targetType))).toEqual(new Set(['organization']));
    expect((await byType('org')).map((e) => e.id)).toEqual(merged.map((e) => e.id));
    const facets = await ok<{ targetTypes: string[] }>('GET', `/v1/orgs/${orgId}/audit/facets`, undefined, 200);
    expect(facets.targetTypes).toContain('organization');
    expect(facets.targetTypes).not.toContain('org');
  });
});

async function scanKeys(redis: Redis, match: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}
