import { createHash, randomBytes } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../support/oauth-test-client';
import { RunningPlatform, startPlatform } from '../support/platform';

/**
 * A deployment whose outbound rule allows only a range nothing here uses (so loopback is refused,
 * as in production): what an org admin saves and what a client's metadata document names are
 * refused with the rule's reason, at once.
 */
describe('OAuth and sign-in under the outbound-address rule', () => {
  let p: RunningPlatform;
  let adminUrl: string;
  let orgId: string;
  let db: PrismaClient;
  const logged: string[] = [];
  const realWrite = process.stdout.write.bind(process.stdout);

  beforeAll(async () => {
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => (
      logged.push(String(chunk)),
      realWrite(chunk, ...rest)
    )) as never;
    const [adminPort, edgePort] = [await freePort(), await freePort()];
    adminUrl = `http://127.0.0.1:${adminPort}`;
    p = await startPlatform({
      ADMIN_PORT: String(adminPort),
      EDGE_PORT: String(edgePort),
      ADMIN_PUBLIC_URL: adminUrl,
      EDGE_PUBLIC_URL: `http://127.0.0.1:${edgePort}`,
      // Text logs go through process.stdout.write, which this test reads (pino JSON writes to fd 1 itself).
      LOG_FORMAT: 'text',
      OUTBOUND_ALLOW_CIDRS: '198.51.100.0/24',
    });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Initech', slug: 'initech' })).body.id;
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
  });

  afterAll(async () => {
    await db?.$disconnect();
    process.stdout.write = realWrite;
    await p?.close();
  });

  it('should refuse a loopback IdP issuer when it is saved, naming the field and the rule', async () => {
    const res = await p.admin('PUT', `/v1/orgs/${orgId}/identity-provider`, {
      issuer: 'http://127.0.0.1:9/idp',
      clientId: 'tollgate',
      clientSecret: 'a-secret-of-the-idp',
    });
    expect(res.status).toBe(400);
    expect(res.body.field).toBe('issuer');
    expect(res.body.message).toMatch(/^issuer refused: .*127\.0\.0\.1.*OUTBOUND_ALLOW_CIDRS/);
    expect((await p.admin('GET', `/v1/orgs/${orgId}/identity-provider`)).status).toBe(404);
  });

  it('should refuse a client id metadata document it may not fetch, with the reason in the error and the log', async () => {
    for (const [clientId, reason] of [
      ['https://127.0.0.1:8443/client.json', /refused by the outbound rule: .*127\.0\.0\.1/],
      ['https://cimd.invalid/client.json', /unreachable: /],
    ] as const) {
      const url = new URL(`${adminUrl}/oauth/authorize`);
      url.search = new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: 'http://127.0.0.1:1/callback',
        scope: 'mcp',
        code_challenge: createHash('sha256').update(randomBytes(32)).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();
      const res = await fetch(url, { redirect: 'manual' });
      const page = await res.text();
      expect(res.status, clientId).toBe(400);
      expect(page).toContain('invalid_client');
      expect(page).toContain('the client&#39;s metadata document cannot be used:');
      expect(page.replace(/&#39;/g, "'")).toMatch(reason);
      const line = logged.find((l) => l.includes('client id metadata document refused') && l.includes(clientId));
      expect(line, `log line for ${clientId}`).toMatch(reason);
    }
  });

  it('should record a refused metadata document in the audit trail of each org that authorised the client, once', async () => {
    const clientId = 'https://127.0.0.1:8443/agent-client.json';
    // Someone in Initech authorised this client while its document was usable: an OAuth key of it.
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'ops' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'olga@initech.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const keyId = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'agent' })).body.key.id;
    await db.virtualKey.update({ where: { id: keyId }, data: { kind: 'OAUTH', oauthClientId: clientId } });
    // Another org never authorised it.
    const otherOrgId = (await p.admin('POST', '/v1/orgs', { name: 'Globex', slug: 'globex' })).body.id;

    const authorize = async () => {
      const url = new URL(`${adminUrl}/oauth/authorize`);
      url.search = new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: 'http://127.0.0.1:1/callback',
        scope: 'mcp',
        code_challenge: createHash('sha256').update(randomBytes(32)).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();
      const res = await fetch(url, { redirect: 'manual' });
      expect(res.status).toBe(400);
      await res.text();
    };
    const refusals = async (org: string) =>
      (
        await p.admin<{ action: string; targetId: string; details: Record<string, string> }[]>(
          'GET',
          `/v1/orgs/${org}/audit?action=oauth.client-metadata-refused`,
        )
      ).body;

    await authorize();
    await vi.waitFor(async () => expect(await refusals(orgId)).toHaveLength(1));
    expect((await refusals(orgId))[0]).toMatchObject({
      action: 'oauth.client-metadata-refused',
      targetId: clientId,
      details: { clientId, reason: expect.stringMatching(/^refused by the outbound rule: .*127\.0\.0\.1/) },
    });
    // Anyone can repeat the refusal: the trail gets it once an hour, not once per attempt.
    for (let i = 0; i < 3; i++) await authorize();
    const repeatedLogged = logged.filter(
      (l) => l.includes('client id metadata document refused') && l.includes(clientId),
    );
    expect(repeatedLogged.length).toBeGreaterThanOrEqual(4);
    expect(await refusals(orgId)).toHaveLength(1);
    expect(await refusals(otherOrgId)).toHaveLength(0);
  });
});
