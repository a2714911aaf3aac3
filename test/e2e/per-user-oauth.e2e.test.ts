import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { JOB_OPTIONS, JobName, QueueName } from '@tollgate/queue';
import {
  callMeta,
  connectAgent,
  refuseAuditRows,
  textOf,
  toolError,
  waitForJobs,
  testBullOptions,
} from '@tollgate/testing';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import {
  AuthorizationServer,
  authorizeInBrowser,
  startAuthorizationServer,
} from '../fixtures/oauth-authorization-server';
import { ProtectedServer, startProtectedServer } from '../fixtures/protected-mcp-server';
import { RunningPlatform, startPlatform } from '../support/platform';

// The admin API's public URL as the authorization server knows it (the redirect URI). The test
// plays the browser: it delivers the redirect to the admin API's real listening address.
const ADMIN_PUBLIC_URL = 'http://tollgate-admin.test';
const CALLBACK_PREFIX = `${ADMIN_PUBLIC_URL}/v1/oauth/callback`;
const STATIC_BEARER = 'static-bearer-5f1c9e0a7d3b';
const STATIC_API_KEY = 'static-api-key-8e2d4b6f1a9c';

describe('per-user OAuth to upstreams, end to end', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let as: AuthorizationServer;
  let notes: ProtectedServer;
  let vault: FixtureServer;
  let orgId: string;
  let aliceId: string;
  let bobId: string;
  let notesId: string;
  let aliceAgent: Client;
  let bobAgent: Client;
  let aliceMemberToken: string;

  const logged: string[] = [];
  const realWrites = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };

  /** Delivers the authorization server's redirect to the admin API, as the user's browser would. */
  async function deliverCallback(callback: URL) {
    const res = await fetch(`${p.adminUrl}${callback.pathname}${callback.search}`);
    return { status: res.status, body: (await res.json()) as any };
  }

  async function connectAs(authorizationUrl: string, sub: string) {
    const callback = await authorizeInBrowser(authorizationUrl, sub, CALLBACK_PREFIX);
    const done = await deliverCallback(callback);
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('connected');
    return done.body as { upstreamId: string; syncJobId: string };
  }

  async function whoami(agent: Client): Promise<CallToolResult> {
    return (await agent.callTool({ name: 'notes__whoami', arguments: {} })) as CallToolResult;
  }

  async function connectionOf(userId: string) {
    return db.userConnection.findUniqueOrThrow({ where: { userId_upstreamId: { userId, upstreamId: notesId } } });
  }

  beforeAll(async () => {
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => (
      logged.push(String(chunk)),
      realWrites.out(chunk, ...rest)
    )) as never;
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => (
      logged.push(String(chunk)),
      realWrites.err(chunk, ...rest)
    )) as never;
    as = await startAuthorizationServer({ scope: 'mcp' });
    notes = await startProtectedServer(as.issuer);
    vault = await startFixtureServer();
    p = await startPlatform({ LOG_LEVEL: 'verbose', ADMIN_PUBLIC_URL });
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });

    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Acme', slug: 'acme' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'eng' })).body.id;
    aliceId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'alice@acme.test' })).body.id;
    bobId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'bob@acme.test' })).body.id;
    for (const userId of [aliceId, bobId])
      expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId })).status).toBe(201);
    const aliceKey = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId: aliceId, name: 'alice-agent' }))
      .body;
    const bobKey = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId: bobId, name: 'bob-agent' })).body;
    const member = await p.admin('POST', '/v1/admin-tokens', { role: 'MEMBER', orgId, userId: aliceId, name: 'alice' });
    expect(member.status).toBe(201);
    aliceMemberToken = member.body.secret;

    const reg = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'notes',
      transport: 'STREAMABLE_HTTP',
      url: notes.url,
      authMode: 'PER_USER_OAUTH',
      oauth: { scope: 'mcp' },
      callTimeoutMs: 5000,
    });
    expect(reg.status).toBe(201);
    expect(reg.body.authMode).toBe('PER_USER_OAUTH');
    notesId = reg.body.id;
    const policy = await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['notes:*'], deny: [] });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: notesId,
          toolPattern: '*',
          perCallMicros: 100_000,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'KEY',
          scopeId: bobKey.key.id,
          period: 'MONTH',
          limitMicros: 1_000_000,
        })
      ).status,
    ).toBe(200);

    aliceAgent = await connectAgent(p.edgeUrl, aliceKey.secret, 'alice-agent');
    bobAgent = await connectAgent(p.edgeUrl, bobKey.secret, 'bob-agent');
  });

  afterAll(async () => {
    process.stdout.write = realWrites.out;
    process.stderr.write = realWrites.err;
    await Promise.allSettled([aliceAgent?.close(), bobAgent?.close()]);
    await db?.$disconnect();
    await p?.close();
    await Promise.allSettled([notes?.close(), vault?.close(), as?.close()]);
  });

  it('should give an authorization URL with PKCE, state and the upstream as resource when a user starts connecting', async () => {
    const res = await p.admin(
      'POST',
      `/v1/orgs/${orgId}/users/${aliceId}/connections/${notesId}`,
      undefined,
      aliceMemberToken,
    );
    expect(res.status).toBe(201);
    const url = new URL(res.body.authorizationUrl);
    expect(url.origin).toBe(as.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toBeTruthy();
    expect(url.searchParams.get('resource')).toBe(notes.url);
    expect(url.searchParams.get('redirect_uri')).toBe(CALLBACK_PREFIX);
    expect(url.searchParams.get('state')).toBe(res.body.state);

    const { syncJobId } = await connectAs(res.body.authorizationUrl, 'alice-sub');
    // The catalog of a per-user upstream is read with the first connected user's token.
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [syncJobId]);
    const tools = await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${notesId}/tools`);
    expect(tools.body.map((t: { name: string }) => t.name)).toEqual(['whoami']);
  });

  it('should refuse a callback whose state was already used or never issued', async () => {
    const res = await p.admin('POST', `/v1/orgs/${orgId}/users/${aliceId}/connections/${notesId}`);
    const callback = await authorizeInBrowser(res.body.authorizationUrl, 'alice-sub', CALLBACK_PREFIX);
    expect((await deliverCallback(callback)).status).toBe(200);
    const replay = await deliverCallback(callback);
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe('OAUTH_INVALID_STATE');
    const forged = new URL(callback);
    forged.searchParams.set('state', 'not-a-state-we-issued');
    expect((await deliverCallback(forged)).status).toBe(400);
  });

  it('should store no connection when its audit row cannot be written', async () => {
    const carol = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'carol@acme.test' })).body.id;
    const res = await p.admin('POST', `/v1/orgs/${orgId}/users/${carol}/connections/${notesId}`);
    const callback = await authorizeInBrowser(res.body.authorizationUrl, 'carol-sub', CALLBACK_PREFIX);
    const allowAudit = await refuseAuditRows(db, 'connection.connected');
    try {
      expect((await deliverCallback(callback)).status).toBe(500);
    } finally {
      await allowAudit();
    }
    expect(await db.userConnection.count({ where: { userId: carol } })).toBe(0);
    const connections = await p.admin('GET', `/v1/orgs/${orgId}/users/${carol}/connections`);
    expect(connections.body).toEqual([]);
  });

  it('should keep the tokens in the database unreadable as plain text', async () => {
    const row = await connectionOf(aliceId);
    expect(row.encKeyId).toBe('k1');
    const raw = JSON.stringify(await db.$queryRaw`SELECT * FROM "UserConnection"`);
    expect(as.issuedAccessTokens.length).toBeGreaterThan(0);
    for (const token of [...as.issuedAccessTokens, ...as.issuedRefreshTokens]) expect(raw).not.toContain(token);
    const upstreamRow = JSON.stringify(await db.$queryRaw`SELECT * FROM "UpstreamServer"`);
    for (const token of [...as.issuedAccessTokens, ...as.issuedRefreshTokens]) expect(upstreamRow).not.toContain(token);
  });

  it('should reach the upstream with the caller’s own token when a connected user calls', async () => {
    const result = await whoami(aliceAgent);
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(textOf(result))).toEqual({ sub: 'alice-sub' });
    const last = notes.calls.at(-1)!;
    expect(last.sub).toBe('alice-sub');
    expect(as.issuedAccessTokens).toContain(last.token);
  });

  it('should answer AUTH_REQUIRED with a connect URL and charge nothing when the user has not connected', async () => {
    const callsBefore = notes.calls.length;
    const result = await whoami(bobAgent);
    expect(result.isError).toBe(true);
    const err = toolError(result)!;
    expect(err.code).toBe('AUTH_REQUIRED');
    expect(err.reason).toBe('not_connected');
    expect(err.charged).toBe(false);
    expect(typeof err.connectUrl).toBe('string');
    expect(textOf(result)).toContain(err.connectUrl as string);
    expect(callMeta(result)).toBeUndefined();
    expect(notes.calls.length).toBe(callsBefore);
    // Nothing reserved stays behind: a full budget is still available.
    const budgets = await p.admin('GET', `/v1/orgs/${orgId}/budgets`);
    expect(budgets.status).toBe(200);
    expect(JSON.stringify(budgets.body)).not.toMatch(/"spentMicros":[1-9]/);
  });

  it('should give the same AUTH_REQUIRED answer through tollgate__call_tool and inside a code-mode script', async () => {
    const direct = toolError(await whoami(bobAgent))!;
    const viaMeta = toolError(
      (await bobAgent.callTool({
        name: 'tollgate__call_tool',
        arguments: { name: 'notes__whoami', arguments: {} },
      })) as CallToolResult,
    )!;
    expect(viaMeta).toMatchObject({ code: 'AUTH_REQUIRED', reason: direct.reason, upstream: 'notes', charged: false });
    expect(typeof viaMeta.connectUrl).toBe('string');

    const teamId = (await p.admin('GET', `/v1/orgs/${orgId}/teams`)).body[0].id;
    const codeKey = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, {
        teamId,
        userId: bobId,
        name: 'bob-code',
        disclosureMode: 'CODE',
      })
    ).body.secret;
    const coder = await connectAgent(p.edgeUrl, codeKey, 'bob-coder');
    try {
      const run = (await coder.callTool({
        name: 'tollgate__run_script',
        arguments: {
          code: `try {\n  await callTool('notes__whoami', {});\n  return 'called';\n} catch (e) {\n  return { code: e.code, reason: e.answer.reason, connectUrl: e.answer.connectUrl };\n}`,
        },
      })) as CallToolResult;
      const answer = JSON.parse(textOf(run));
      expect(answer.result).toMatchObject({ code: 'AUTH_REQUIRED', reason: direct.reason });
      expect(typeof answer.result.connectUrl).toBe('string');
    } finally {
      await coder.close();
    }
  });

  it('should also offer the connect URL by URL elicitation to a client that supports it', async () => {
    const teamId = (await p.admin('GET', `/v1/orgs/${orgId}/teams`)).body[0].id;
    const secret = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId: bobId, name: 'bob-desktop' }))
      .body.secret;
    const client = new Client({ name: 'desktop', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    const offered = new Promise<ElicitRequest['params']>((resolve) =>
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        resolve(request.params);
        return { action: 'accept' };
      }),
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${p.edgeUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${secret}` } },
      }),
    );
    try {
      const result = (await client.callTool({ name: 'notes__whoami', arguments: {} })) as CallToolResult;
      const err = toolError(result)!;
      expect(err.code).toBe('AUTH_REQUIRED');
      expect(await offered).toMatchObject({ mode: 'url', url: err.connectUrl });
    } finally {
      await client.close();
    }
  });

  it('should let a user connect from the URL in the tool result and then call as themselves, never as another user', async () => {
    const first = toolError(await whoami(bobAgent))!;
    await connectAs(first.connectUrl as string, 'bob-sub');
    for (let i = 0; i < 3; i++) {
      expect(JSON.parse(textOf(await whoami(bobAgent)))).toEqual({ sub: 'bob-sub' });
      expect(JSON.parse(textOf(await whoami(aliceAgent)))).toEqual({ sub: 'alice-sub' });
    }
    const last = notes.calls.slice(-6);
    expect(last.map((c) => c.sub)).toEqual(['bob-sub', 'alice-sub', 'bob-sub', 'alice-sub', 'bob-sub', 'alice-sub']);
    const bobTokens = new Set(last.filter((c) => c.sub === 'bob-sub').map((c) => c.token));
    const aliceTokens = new Set(last.filter((c) => c.sub === 'alice-sub').map((c) => c.token));
    for (const t of bobTokens) expect(aliceTokens.has(t)).toBe(false);
  });

  it('should keep a member to their own connections and never show tokens', async () => {
    expect(
      (await p.admin('GET', `/v1/orgs/${orgId}/users/${bobId}/connections`, undefined, aliceMemberToken)).status,
    ).toBe(403);
    expect(
      (await p.admin('DELETE', `/v1/orgs/${orgId}/users/${bobId}/connections/${notesId}`, undefined, aliceMemberToken))
        .status,
    ).toBe(403);
    expect(
      (await p.admin('POST', `/v1/orgs/${orgId}/users/${bobId}/connections/${notesId}`, undefined, aliceMemberToken))
        .status,
    ).toBe(403);
    expect((await p.admin('GET', `/v1/orgs/${orgId}/connections`, undefined, aliceMemberToken)).status).toBe(403);
    const own = await p.admin('GET', `/v1/orgs/${orgId}/users/${aliceId}/connections`, undefined, aliceMemberToken);
    expect(own.status).toBe(200);
    expect(own.body).toEqual([expect.objectContaining({ upstreamId: notesId, health: 'valid', canRefresh: true })]);
    const all = await p.admin('GET', `/v1/orgs/${orgId}/connections`);
    expect(all.body.map((c: { userId: string }) => c.userId).sort()).toEqual([aliceId, bobId].sort());
    const shown = JSON.stringify([own.body, all.body]);
    for (const token of [...as.issuedAccessTokens, ...as.issuedRefreshTokens]) expect(shown).not.toContain(token);
    expect(shown).not.toMatch(/tokensEnc|accessToken|refreshToken/);
  });

  it('should refresh an expired token before calling', async () => {
    const before = notes.calls.filter((c) => c.sub === 'alice-sub').at(-1)!.token;
    await db.userConnection.update({
      where: { id: (await connectionOf(aliceId)).id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect(JSON.parse(textOf(await whoami(aliceAgent)))).toEqual({ sub: 'alice-sub' });
    const after = notes.calls.at(-1)!;
    expect(after.sub).toBe('alice-sub');
    expect(after.token).not.toBe(before);
    expect((await connectionOf(aliceId)).expiresAt!.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);
  });

  it('should refresh tokens about to expire when the oauth-refresh job runs', async () => {
    const row = await connectionOf(bobId);
    await db.userConnection.update({ where: { id: row.id }, data: { expiresAt: new Date(Date.now() + 120_000) } });
    const queue = new Queue(QueueName.OAuthRefresh, testBullOptions(p.env.redisUrl, p.env.redisPrefix));
    try {
      const job = await queue.add(
        JobName.RefreshConnections,
        { withinSeconds: 600 },
        { ...JOB_OPTIONS[JobName.RefreshConnections], jobId: `test-refresh-${Date.now()}` },
      );
      await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.OAuthRefresh, [job.id!]);
    } finally {
      await queue.close();
    }
    const after = await connectionOf(bobId);
    expect(after.tokensEnc).not.toBe(row.tokensEnc);
    expect(after.status).toBe('valid');
    expect(after.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);
    expect(JSON.parse(textOf(await whoami(bobAgent)))).toEqual({ sub: 'bob-sub' });
  });

  it('should mark the connection refresh_failed and answer AUTH_REQUIRED when the refresh is refused', async () => {
    await as.revokeGrantsOf('bob-sub');
    await db.userConnection.update({
      where: { id: (await connectionOf(bobId)).id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const result = await whoami(bobAgent);
    expect(toolError(result)).toMatchObject({ code: 'AUTH_REQUIRED', reason: 'refresh_failed' });
    const health = await p.admin('GET', `/v1/orgs/${orgId}/connections?upstreamId=${notesId}`);
    expect(health.body.find((c: { userId: string }) => c.userId === bobId)).toMatchObject({
      health: 'refresh_failed',
      lastRefreshError: expect.any(String),
    });
    // Alice is untouched by Bob's failure.
    expect(JSON.parse(textOf(await whoami(aliceAgent)))).toEqual({ sub: 'alice-sub' });
  });

  it('should answer AUTH_REQUIRED once a user revokes their connection', async () => {
    expect(
      (
        await p.admin(
          'DELETE',
          `/v1/orgs/${orgId}/users/${aliceId}/connections/${notesId}`,
          undefined,
          aliceMemberToken,
        )
      ).status,
    ).toBe(204);
    const result = await whoami(aliceAgent);
    expect(toolError(result)).toMatchObject({ code: 'AUTH_REQUIRED', reason: 'not_connected' });
    expect(
      (await p.admin('GET', `/v1/orgs/${orgId}/users/${aliceId}/connections`, undefined, aliceMemberToken)).body,
    ).toEqual([]);
  });

  it('should send a static secret to the upstream and never return it from the API', async () => {
    const reg = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'vault',
      transport: 'STREAMABLE_HTTP',
      url: vault.url,
      bearerToken: STATIC_BEARER,
      headers: { 'X-Api-Key': STATIC_API_KEY },
    });
    expect(reg.status).toBe(201);
    expect(reg.body.authMode).toBe('STATIC_SECRET');
    expect(reg.body.headerNames).toEqual(['Authorization', 'X-Api-Key']);
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['notes:*', 'vault:*'], deny: [] }))
        .status,
    ).toBe(200);
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${reg.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);

    const result = (await aliceAgent.callTool({ name: 'vault__ping', arguments: {} })) as CallToolResult;
    expect(textOf(result)).toBe('pong');
    const call = vault.calls.at(-1)!;
    expect(call.headers.authorization).toBe(`Bearer ${STATIC_BEARER}`);
    expect(call.headers['x-api-key']).toBe(STATIC_API_KEY);

    const shown = JSON.stringify([
      (await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${reg.body.id}`)).body,
      (await p.admin('GET', `/v1/orgs/${orgId}/upstreams`)).body,
      (await p.admin('GET', `/v1/orgs/${orgId}/audit`)).body,
    ]);
    const stored = JSON.stringify(await db.$queryRaw`SELECT * FROM "UpstreamServer"`);
    for (const secret of [STATIC_BEARER, STATIC_API_KEY]) {
      expect(shown).not.toContain(secret);
      expect(stored).not.toContain(secret);
    }
  });

  it('should write no token or secret to any log line', () => {
    const all = logged.join('');
    expect(all).toContain('connected upstream notes');
    const secrets = [...as.issuedAccessTokens, ...as.issuedRefreshTokens, STATIC_BEARER, STATIC_API_KEY];
    expect(secrets.length).toBeGreaterThan(4);
    for (const s of secrets) expect(all).not.toContain(s);
  });
});
