import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { callMeta, refuseAuditRows, toolError, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { QueueName } from '@tollgate/queue';
import { connect as netConnect } from 'node:net';
import { Agent as UndiciAgent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { authorizeInBrowser, startAuthorizationServer } from '../fixtures/oauth-authorization-server';
import { freePort, REDIRECT_URL, TestOAuthProvider } from '../support/oauth-test-client';
import { RunningPlatform, startPlatform } from '../support/platform';

const PRICE_PER_PING = 100_000;
const CALLS_ALLOWED = 3;
/** What a page says, without markup. */
function pageText(html: string): string {
  return html
    .replace(/<(style|script)[\s\S]*?<\/\1>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 400);
}

/** A user's browser without a browser: follows redirects by hand, keeps cookies, fills the forms. */
class FormBrowser {
  private readonly cookies = new Map<string, string>();
  readonly pages: string[] = [];

  constructor(
    private readonly person: {
      email: string;
      code: string;
      team?: string;
      sso?: { idpIssuer: string; sub: string; orgSlug: string };
    },
    /** Where the client wants the user back (the walk stops there). */
    private readonly isRedirect: (url: URL) => boolean = (url) => url.href.startsWith(REDIRECT_URL),
    /** Connects from another local address when given (a second "source" on one machine). */
    private readonly dispatcher?: UndiciAgent,
  ) {}

  async request(url: URL, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const res = (await undiciFetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      dispatcher: this.dispatcher,
      headers: {
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
    })) as unknown as Response;
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      this.cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return res;
  }

  /** Signs in and consents, and returns the redirect to the client's redirect URI. */
  async authorize(authorizationUrl: URL): Promise<URL> {
    let res = await this.request(authorizationUrl);
    let url = authorizationUrl;
    for (let hop = 0; hop < 20; hop++) {
      const location = res.headers.get('location');
      if (location) {
        url = new URL(location, url);
        if (this.isRedirect(url)) return url;
        // At the organisation's IdP (the oidc-provider fixture): sign in as the given subject.
        const sso = this.person.sso;
        if (
          sso &&
          url.origin === new URL(sso.idpIssuer).origin &&
          /^\/interaction\/[^/]+$/.test(url.pathname) &&
          !url.searchParams.has('login')
        )
          url.searchParams.set('login', sso.sub);
        res = await this.request(url);
        continue;
      }
      const html = await res.text();
      this.pages.push(html);
      if (res.status >= 400 && !html.includes('name="csrf"'))
        throw new Error(`authorization stopped at ${url.pathname} with HTTP ${res.status}: ${pageText(html)}`);
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
      const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
      if (!csrf || !action) throw new Error(`no form at ${url.pathname}: ${html.slice(0, 400)}`);
      const target = new URL(action, url);
      if (html.includes('name="orgSlug"') && this.person.sso) {
        // The sign-in page asks which organisation: type its short name.
        res = await this.request(target, {
          method: 'POST',
          form: { csrf, method: 'sso-org', email: this.person.email, orgSlug: this.person.sso.orgSlug },
        });
      } else if (html.includes('name="code"')) {
        if (res.status === 401) throw new Error('sign-in refused');
        const form: Record<string, string> = this.person.sso
          ? { csrf, method: 'sso', email: this.person.email }
          : { csrf, method: 'code', email: this.person.email, code: this.person.code };
        res = await this.request(target, { method: 'POST', form });
      } else {
        const teamId = this.person.team
          ? new RegExp(`<option value="([^"]+)">${this.person.team}<`).exec(html)?.[1]
          : /name="teamId" value="([^"]+)"/.exec(html)?.[1];
        res = await this.request(target, { method: 'POST', form: { csrf, teamId: teamId ?? '', decision: 'allow' } });
      }
      url = target;
    }
    throw new Error('too many steps');
  }
}

describe('OAuth for MCP clients, end to end', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let fixture: FixtureServer;
  let orgId: string;
  let userId: string;
  let signInCode: string;
  let adminUrl: string;
  let edgeUrl: string;

  async function connectByOAuth(
    team?: string,
  ): Promise<{ client: Client; auth: TestOAuthProvider; browser: FormBrowser }> {
    const browser = new FormBrowser({ email: 'grace@acme.test', code: signInCode, team });
    const auth = new TestOAuthProvider(browser);
    const first = new Client({ name: 'oauth-agent', version: '1.0.0' });
    await expect(
      first.connect(new StreamableHTTPClientTransport(new URL(`${edgeUrl}/mcp`), { authProvider: auth })),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    const code = auth.lastRedirect!.searchParams.get('code')!;
    expect(auth.lastRedirect!.searchParams.get('iss')).toBe(adminUrl);
    const finishing = new StreamableHTTPClientTransport(new URL(`${edgeUrl}/mcp`), { authProvider: auth });
    await finishing.finishAuth(code);
    const client = new Client({ name: 'oauth-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${edgeUrl}/mcp`), { authProvider: auth }));
    return { client, auth, browser };
  }

  // Everything the apps print, to prove no token or sign-in code reaches a log line.
  const logged: string[] = [];
  const secrets: string[] = [];
  const realWrites = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };

  beforeAll(async () => {
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => (
      logged.push(String(chunk)),
      realWrites.out(chunk, ...rest)
    )) as never;
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => (
      logged.push(String(chunk)),
      realWrites.err(chunk, ...rest)
    )) as never;
    const [adminPort, edgePort] = [await freePort(), await freePort()];
    adminUrl = `http://127.0.0.1:${adminPort}`;
    edgeUrl = `http://127.0.0.1:${edgePort}`;
    p = await startPlatform({
      ADMIN_PORT: String(adminPort),
      EDGE_PORT: String(edgePort),
      ADMIN_PUBLIC_URL: adminUrl,
      EDGE_PUBLIC_URL: edgeUrl,
      // Text logs go through process.stdout.write, which this test reads (pino JSON writes to fd 1 itself).
      LOG_FORMAT: 'text',
      LOG_LEVEL: 'verbose',
    });
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startFixtureServer();

    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Acme', slug: 'acme' })).body.id;
    const platformTeam = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'platform' })).body.id;
    const researchTeam = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'research' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'grace@acme.test' })).body.id;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${platformTeam}/members`, { userId })).status).toBe(201);
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${researchTeam}/members`, { userId })).status).toBe(201);
    const code = await p.admin('POST', `/v1/orgs/${orgId}/users/${userId}/sign-in-codes`, {});
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    signInCode = code.body.code;
    secrets.push(signInCode);

    const upstream = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'fx',
      transport: 'STREAMABLE_HTTP',
      url: fixture.url,
      callTimeoutMs: 5000,
    });
    expect(upstream.status).toBe(201);
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstream.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    const policy = await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fx:*'], deny: [] });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: upstream.body.id,
          toolPattern: '*',
          perCallMicros: PRICE_PER_PING,
        })
      ).status,
    ).toBe(201);
    // The budget is on the team the user picks at consent: the OAuth key's calls count against it.
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'TEAM',
          scopeId: researchTeam,
          period: 'MONTH',
          limitMicros: PRICE_PER_PING * CALLS_ALLOWED,
        })
      ).status,
    ).toBe(200);
  });

  afterAll(async () => {
    process.stdout.write = realWrites.out;
    process.stderr.write = realWrites.err;
    await fixture?.close();
    await db?.$disconnect();
    await p?.close();
  });

  it('should name the authorization server in the protected-resource metadata and in the 401', async () => {
    const unauth = await fetch(`${edgeUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('www-authenticate')).toContain(
      `resource_metadata="${edgeUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(unauth.headers.get('www-authenticate')).toContain('scope="mcp"');
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const prm = await (await fetch(`${edgeUrl}${path}`)).json();
      expect(prm).toMatchObject({
        resource: `${edgeUrl}/mcp`,
        authorization_servers: [adminUrl],
        scopes_supported: ['mcp'],
      });
    }
    const meta = await (await fetch(`${adminUrl}/.well-known/oauth-authorization-server`)).json();
    expect(meta).toMatchObject({
      issuer: adminUrl,
      registration_endpoint: `${adminUrl}/oauth/register`,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      revocation_endpoint: `${adminUrl}/oauth/revoke`,
    });
  });

  it('should connect the SDK client by OAuth, bill its calls to the user OAuth key and refuse at the budget', async () => {
    const { client, browser } = await connectByOAuth('research');
    // The consent page named the client, where it sends the user back, and offered both teams.
    const consent = browser.pages.find((html) => html.includes('Authorise'))!;
    expect(consent).toContain('Test Agent');
    expect(consent).toContain(new URL(REDIRECT_URL).host);
    expect(consent).toContain('>platform<');
    expect(consent).toContain('>research<');

    const keys = (await p.admin('GET', `/v1/orgs/${orgId}/keys`)).body as {
      id: string;
      kind: string;
      oauthClientName: string;
      teamId: string;
      userId: string;
    }[];
    const oauthKey = keys.find((k) => k.kind === 'OAUTH')!;
    expect(oauthKey).toMatchObject({ oauthClientName: 'Test Agent', userId });
    const audit = JSON.stringify((await p.admin('GET', `/v1/orgs/${orgId}/audit`)).body);
    expect(audit).toContain('key.oauth-authorized');
    expect(audit).toContain(oauthKey.id);

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('fx__ping');
    const callIds: string[] = [];
    for (let i = 0; i < CALLS_ALLOWED; i++) {
      const res = await client.callTool({ name: 'fx__ping', arguments: {} });
      expect(res.isError).toBeFalsy();
      callIds.push(callMeta(res as never)!.callId);
    }
    const refused = await client.callTool({ name: 'fx__ping', arguments: {} });
    expect(toolError(refused as never)?.code).toBe('BUDGET_EXCEEDED');
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, callIds);
    const rows = await db.usageEvent.findMany({ where: { orgId, keyId: oauthKey.id } });
    expect(rows).toHaveLength(CALLS_ALLOWED);
    expect(rows.every((r) => r.userId === userId && Number(r.costMicros) === PRICE_PER_PING)).toBe(true);
    await client.close();
  });
  /** A client registered by RFC 7591, driven by hand: authorize with PKCE, then the token endpoint. */
  async function registerClient(): Promise<string> {
    const res = await fetch(`${adminUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Hand Client',
        redirect_uris: [REDIRECT_URL],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { client_id: string }).client_id;
  }

  async function authorizationCode(clientId: string, verifier: string, team = 'platform'): Promise<string> {
    const url = new URL(`${adminUrl}/oauth/authorize`);
    url.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT_URL,
      scope: 'mcp',
      resource: `${edgeUrl}/mcp`,
      state: 'st',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const back = await new FormBrowser({ email: 'grace@acme.test', code: signInCode, team }).authorize(url);
    expect(back.searchParams.get('state')).toBe('st');
    return back.searchParams.get('code')!;
  }

  async function token(params: Record<string, string>): Promise<{ status: number; body: Record<string, string> }> {
    const res = await fetch(`${adminUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  }

  async function edgeStatus(accessToken: string): Promise<number> {
    const res = await fetch(`${edgeUrl}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${accessToken}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    await res.text();
    return res.status;
  }

  async function tokensFor(clientId: string): Promise<Record<string, string>> {
    const verifier = randomBytes(32).toString('base64url');
    const code = await authorizationCode(clientId, verifier);
    const res = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT_URL,
      resource: `${edgeUrl}/mcp`,
    });
    expect(res.status).toBe(200);
    secrets.push(res.body.access_token, res.body.refresh_token);
    return res.body;
  }

  it('should make the OAuth key when the code is redeemed, so an abandoned consent leaves none', async () => {
    const clientId = await registerClient();
    const oauthKeysOf = async () =>
      (
        (await p.admin('GET', `/v1/orgs/${orgId}/keys`)).body as { kind: string; oauthClientId: string | null }[]
      ).filter((k) => k.kind === 'OAUTH' && k.oauthClientId === clientId);
    const verifier = randomBytes(32).toString('base64url');
    const code = await authorizationCode(clientId, verifier);
    // Consented, code in hand, never redeemed: no key (and nothing in the audit trail).
    expect(await oauthKeysOf()).toEqual([]);
    const redeemed = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT_URL,
      resource: `${edgeUrl}/mcp`,
    });
    expect(redeemed.status).toBe(200);
    secrets.push(redeemed.body.access_token, redeemed.body.refresh_token);
    expect(await oauthKeysOf()).toHaveLength(1);
    // The registration is now in use: it no longer expires as an unused one would.
    const row = await db.oAuthClient.findUniqueOrThrow({ where: { clientId } });
    expect(row.usedAt).not.toBeNull();
    expect(row.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 86_400_000);
  });

  it('should make no OAuth key and issue no token when the key’s audit row cannot be written', async () => {
    const clientId = await registerClient();
    const oauthKeys = async () => db.virtualKey.count({ where: { orgId, kind: 'OAUTH', oauthClientId: clientId } });
    const redeem = async () => {
      const verifier = randomBytes(32).toString('base64url');
      const code = await authorizationCode(clientId, verifier);
      const params = { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId };
      return token({ ...params, redirect_uri: REDIRECT_URL, resource: `${edgeUrl}/mcp` });
    };
    const allowAudit = await refuseAuditRows(db, 'key.oauth-authorized');
    let refused;
    try {
      refused = await redeem();
    } finally {
      await allowAudit();
    }
    expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 500, error: 'server_error' });
    expect(refused.body.access_token).toBeUndefined();
    expect(await oauthKeys()).toBe(0);
    const redeemed = await redeem();
    expect(redeemed.status).toBe(200);
    secrets.push(redeemed.body.access_token, redeemed.body.refresh_token);
    expect(await oauthKeys()).toBe(1);
  });

  it('should rotate refresh tokens, refuse a used one, and stop a revoked access token at the edge', async () => {
    const clientId = await registerClient();
    const first = await tokensFor(clientId);
    expect(await edgeStatus(first.access_token)).toBe(200);
    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(first.refresh_token);
    expect(await edgeStatus(refreshed.body.access_token)).toBe(200);
    const reused = await token({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: clientId,
    });
    expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    // RFC 7009: the client revokes its access token; the edge refuses it on the next request.
    const fresh = await tokensFor(clientId);
    const revoke = await fetch(`${adminUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: fresh.access_token, client_id: clientId }).toString(),
    });
    expect(revoke.status).toBe(200);
    expect(await edgeStatus(fresh.access_token)).toBe(401);
  });

  it('should answer the RFC errors for a wrong PKCE verifier, a reused code (revoking its tokens), an unknown client and another resource', async () => {
    const clientId = await registerClient();
    const verifier = randomBytes(32).toString('base64url');
    const code = await authorizationCode(clientId, verifier);
    const wrong = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: randomBytes(32).toString('base64url'),
      client_id: clientId,
      redirect_uri: REDIRECT_URL,
    });
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    const code2 = await authorizationCode(clientId, verifier);
    const good = await token({
      grant_type: 'authorization_code',
      code: code2,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT_URL,
      resource: `${edgeUrl}/mcp`,
    });
    expect(good.status).toBe(200);
    expect(await edgeStatus(good.body.access_token)).toBe(200);
    const again = await token({
      grant_type: 'authorization_code',
      code: code2,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT_URL,
      resource: `${edgeUrl}/mcp`,
    });
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // A reused code means it leaked: the tokens of its grant stop working.
    expect(await edgeStatus(good.body.access_token)).toBe(401);
    expect(
      await token({ grant_type: 'refresh_token', refresh_token: good.body.refresh_token, client_id: clientId }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    const unknown = await token({
      grant_type: 'authorization_code',
      code: 'x'.repeat(43),
      code_verifier: verifier,
      client_id: 'no-such-client',
      redirect_uri: REDIRECT_URL,
    });
    expect(unknown).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    const badAuthorize = await fetch(
      `${adminUrl}/oauth/authorize?client_id=no-such-client&response_type=code&redirect_uri=${encodeURIComponent(REDIRECT_URL)}`,
      { redirect: 'manual' },
    );
    expect(badAuthorize.status).toBe(400);
    expect(await badAuthorize.text()).toContain('invalid_client');

    // Client ID Metadata Documents: a client id URL at a private address or nowhere is an unknown client.
    for (const cimd of ['https://10.1.2.3/client.json', 'https://127.0.0.1:1/client.json']) {
      const res = await fetch(
        `${adminUrl}/oauth/authorize?client_id=${encodeURIComponent(cimd)}&response_type=code&redirect_uri=${encodeURIComponent(REDIRECT_URL)}`,
        { redirect: 'manual' },
      );
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('invalid_client');
    }

    const otherResource = new URL(`${adminUrl}/oauth/authorize`);
    otherResource.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT_URL,
      scope: 'mcp',
      resource: 'https://other.example/mcp',
      state: 'st',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const refusedTarget = await fetch(otherResource, { redirect: 'manual' });
    const location = new URL(refusedTarget.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_target');
    expect(location.searchParams.get('iss')).toBe(adminUrl);

    const plain = new URL(otherResource);
    plain.searchParams.set('resource', `${edgeUrl}/mcp`);
    plain.searchParams.set('code_challenge_method', 'plain');
    const refusedPlain = new URL((await fetch(plain, { redirect: 'manual' })).headers.get('location')!);
    expect(refusedPlain.searchParams.get('error')).toBe('invalid_request');
  });

  it('should refuse at the edge a token another authorization server minted for the edge', async () => {
    const foreign = await startAuthorizationServer();
    try {
      const reg = (await (
        await fetch(`${foreign.issuer}/reg`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            redirect_uris: [REDIRECT_URL],
            grant_types: ['authorization_code'],
            token_endpoint_auth_method: 'none',
          }),
        })
      ).json()) as { client_id: string };
      const verifier = randomBytes(32).toString('base64url');
      const url = new URL(`${foreign.issuer}/auth`);
      url.search = new URLSearchParams({
        client_id: reg.client_id,
        response_type: 'code',
        redirect_uri: REDIRECT_URL,
        scope: 'mcp',
        resource: `${edgeUrl}/mcp`,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();
      const back = await authorizeInBrowser(url.href, userId, REDIRECT_URL);
      const res = await fetch(`${foreign.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: back.searchParams.get('code')!,
          code_verifier: verifier,
          client_id: reg.client_id,
          redirect_uri: REDIRECT_URL,
          resource: `${edgeUrl}/mcp`,
        }),
      });
      const minted = (await res.json()) as { access_token: string };
      expect(minted.access_token).toBeTruthy();
      expect(await edgeStatus(minted.access_token)).toBe(401);
    } finally {
      await foreign.close();
    }
  });

  it('should stop the OAuth key at the next call when an admin revokes it, and refuse its refresh', async () => {
    const clientId = await registerClient();
    const issued = await tokensFor(clientId);
    expect(await edgeStatus(issued.access_token)).toBe(200);
    const keys = (await p.admin('GET', `/v1/orgs/${orgId}/keys`)).body as {
      id: string;
      oauthClientId: string | null;
    }[];
    const key = keys.find((k) => k.oauthClientId === clientId)!;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/keys/${key.id}/revoke`)).status).toBe(200);
    // The revocation reaches every edge by pub/sub: refused within a second.
    const deadline = Date.now() + 1000;
    let status = await edgeStatus(issued.access_token);
    while (status !== 401 && Date.now() < deadline) status = await edgeStatus(issued.access_token);
    expect(status).toBe(401);
    expect(
      await token({ grant_type: 'refresh_token', refresh_token: issued.refresh_token, client_id: clientId }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('should slow a code guesser per source, without locking the person out, and void codes at offboarding', async () => {
    const bobId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'bob@acme.test' })).body.id;
    const bobCode = (await p.admin('POST', `/v1/orgs/${orgId}/users/${bobId}/sign-in-codes`, { ttlSeconds: 600 })).body
      .code as string;
    secrets.push(bobCode);
    const clientId = await registerClient();
    // A sign-in page for bob, reached from a given local address (the guesser and bob are two sources).
    const signInPageFrom = async (localAddress: string) => {
      // undici ignores `localAddress` in its connect options: connect the socket ourselves.
      const dispatcher = new UndiciAgent({
        connect: (o, done) => {
          const socket = netConnect({ host: o.hostname, port: Number(o.port), localAddress });
          socket.once('connect', () => done(null, socket)).once('error', (err) => done(err, null));
          return socket;
        },
      });
      const browser = new FormBrowser({ email: 'bob@acme.test', code: bobCode }, undefined, dispatcher);
      const url = new URL(`${adminUrl}/oauth/authorize`);
      url.search = new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: REDIRECT_URL,
        scope: 'mcp',
        resource: `${edgeUrl}/mcp`,
        code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();
      let res = await browser.request(url);
      let at = url;
      while (res.headers.get('location')) {
        at = new URL(res.headers.get('location')!, at);
        res = await browser.request(at);
      }
      const csrf = /name="csrf" value="([^"]+)"/.exec(await res.text())![1];
      return (code: string) =>
        browser.request(at, { method: 'POST', form: { csrf, method: 'code', email: 'bob@acme.test', code } });
    };
    // Not 127.0.0.1: the file's other tests sign in from there, and would meet this guesser's wait.
    const guess = await signInPageFrom('127.0.0.4');
    for (let i = 0; i < 6; i++) {
      const wrong = await guess('AAAA-AAAA-AAAA-AAAA');
      expect(wrong.status).toBe(401);
      expect(await wrong.text()).toContain('do not match');
    }
    // The guesser's source must now wait, even with the right code (it is not even checked)...
    const slowed = await guess(bobCode);
    expect(slowed.status).toBe(429);
    expect(await slowed.text()).toMatch(/Too many wrong sign-in codes from your network: try again in [12] seconds/);
    // ...while bob, from elsewhere, is not locked out.
    const bob = await signInPageFrom('127.0.0.2');
    const signedIn = await bob(bobCode);
    expect(signedIn.status).toBe(303);

    // Offboarding voids the code; a new one is refused with 409 USER_OFFBOARDED.
    const again = (await p.admin('POST', `/v1/orgs/${orgId}/users/${bobId}/sign-in-codes`, { ttlSeconds: 600 })).body
      .code as string;
    secrets.push(again);
    expect((await p.admin('POST', `/v1/orgs/${orgId}/users/${bobId}/offboard`)).status).toBe(200);
    const afterOffboarding = await (await signInPageFrom('127.0.0.3'))(again);
    expect(afterOffboarding.status).toBe(401);
    expect(await afterOffboarding.text()).toContain('do not match');
    const refused = await p.admin('POST', `/v1/orgs/${orgId}/users/${bobId}/sign-in-codes`, {});
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'USER_OFFBOARDED' });
  });

  it('should sign a user in at the organisation identity provider and match them by verified email', async () => {
    const idp = await startAuthorizationServer();
    try {
      const reg = (await (
        await fetch(`${idp.issuer}/reg`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            redirect_uris: [`${adminUrl}/oauth/sso/callback`],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_basic',
          }),
        })
      ).json()) as { client_id: string; client_secret: string };
      secrets.push(reg.client_secret);
      const missingSecret = await p.admin('PUT', `/v1/orgs/${orgId}/identity-provider`, {
        issuer: idp.issuer,
        clientId: reg.client_id,
      });
      expect(missingSecret).toMatchObject({ status: 400, body: { field: 'clientSecret' } });
      const put = await p.admin('PUT', `/v1/orgs/${orgId}/identity-provider`, {
        issuer: idp.issuer,
        clientId: reg.client_id,
        clientSecret: reg.client_secret,
      });
      expect(put.status).toBe(200);
      const shown = await p.admin('GET', `/v1/orgs/${orgId}/identity-provider`);
      expect(shown.body).toMatchObject({
        issuer: idp.issuer,
        clientId: reg.client_id,
        emailClaim: 'email',
        redirectUri: `${adminUrl}/oauth/sso/callback`,
      });
      expect(JSON.stringify(shown.body)).not.toContain(reg.client_secret);

      // Signed in at the IdP as Grace: the MCP client connects and calls as her.
      const browser = new FormBrowser({
        email: 'grace@acme.test',
        code: '',
        team: 'platform',
        sso: { idpIssuer: idp.issuer, sub: 'grace@acme.test', orgSlug: 'acme' },
      });
      const auth = new TestOAuthProvider(browser);
      const first = new Client({ name: 'sso-agent', version: '1.0.0' });
      await expect(
        first.connect(new StreamableHTTPClientTransport(new URL(`${edgeUrl}/mcp`), { authProvider: auth })),
      ).rejects.toBeInstanceOf(UnauthorizedError);
      await new StreamableHTTPClientTransport(new URL(`${edgeUrl}/mcp`), { authProvider: auth }).finishAuth(
        auth.lastRedirect!.searchParams.get('code')!,
      );
      const client = new Client({ name: 'sso-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${edgeUrl}/mcp`), { authProvider: auth }));
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('fx__ping');
      await client.close();

      // The IdP vouches for someone Tollgate does not know: refused, whatever email was typed.
      const stranger = new FormBrowser({
        email: 'grace@acme.test',
        code: '',
        sso: { idpIssuer: idp.issuer, sub: 'stranger@acme.test', orgSlug: 'acme' },
      });
      const url = new URL(`${adminUrl}/oauth/authorize`);
      url.search = new URLSearchParams({
        client_id: auth.client!.client_id,
        response_type: 'code',
        redirect_uri: REDIRECT_URL,
        scope: 'mcp',
        resource: `${edgeUrl}/mcp`,
        code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();
      await expect(stranger.authorize(url)).rejects.toThrow(
        /HTTP 400.*No Tollgate user of your organisation has the email stranger@acme.test/s,
      );
    } finally {
      await idp.close();
    }
  });

  it('should connect mcp-remote without a header: it registers, the user signs in and consents, and its calls are governed', async () => {
    const configDir = await mkdtemp(path.join(tmpdir(), 'mcp-remote-'));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [require.resolve('mcp-remote/dist/proxy.js'), `${edgeUrl}/mcp`, String(await freePort())],
      // BROWSER=true: the "browser" mcp-remote opens is a no-op; this test plays the user instead.
      env: { PATH: process.env.PATH ?? '', HOME: configDir, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true' },
      stderr: 'pipe',
    });
    let stderr = '';
    const authorizationUrl = new Promise<URL>((resolve) => {
      transport.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const m = /Please authorize this client by visiting:\s+(\S+)/.exec(stderr);
        if (m) resolve(new URL(m[1]));
      });
    });
    const client = new Client({ name: 'via-mcp-remote', version: '1.0.0' });
    try {
      const connecting = client.connect(transport);
      const person = new FormBrowser(
        { email: 'grace@acme.test', code: signInCode, team: 'platform' },
        (url) => url.pathname === '/oauth/callback' && url.hostname === 'localhost',
      );
      const callback = await person.authorize(await authorizationUrl);
      expect((await fetch(callback)).status).toBe(200);
      await connecting;
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('fx__ping');
      const res = await client.callTool({ name: 'fx__ping', arguments: {} });
      expect(res.isError).toBeFalsy();
      expect(callMeta(res as never)?.costMicros).toBe(PRICE_PER_PING);
      const keys = (await p.admin('GET', `/v1/orgs/${orgId}/keys`)).body as {
        kind: string;
        oauthClientName: string | null;
      }[];
      expect(keys.some((k) => k.kind === 'OAUTH' && /mcp-remote|MCP CLI/i.test(k.oauthClientName ?? ''))).toBe(true);
    } catch (err) {
      throw new Error(`${(err as Error).message}\nmcp-remote said: ${stderr.slice(-1500)}`);
    } finally {
      await client.close();
      await rm(configDir, { recursive: true, force: true });
    }
  });

  it('should never write an access token, refresh token or sign-in code to the logs', () => {
    const output = logged.join('');
    expect(output).toContain('authorised client');
    expect(secrets.length).toBeGreaterThan(6);
    for (const secret of secrets) expect(output).not.toContain(secret);
  });
});
