import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { QueueName } from '@tollgate/queue';
import { callMeta, toolError, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { Browser, Page } from 'playwright-core';
import { closeContexts, workerChromium } from '../support/chromium';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { AuthorizationServer, startAuthorizationServer } from '../fixtures/oauth-authorization-server';
import { connectByOAuth, freePort, REDIRECT_URL, TestOAuthProvider } from '../support/oauth-test-client';
import { RunningPlatform, startPlatform } from '../support/platform';

const PRICE_PER_PING = 100_000;
const CALLS_ALLOWED = 2;

/**
 * A person in a real browser: signs in at the organisation's IdP (the oidc-provider fixture, which
 * signs in whoever its interaction URL names with `?login=`), consents at Tollgate, and ends at the
 * client's redirect URI, whose URL is returned.
 */
class ChromiumPerson {
  /** The organisation names the sign-in page offered for the email (the last walk). */
  offered: string[] = [];

  constructor(
    private readonly browser: Browser,
    private readonly idpIssuer: string,
    private readonly email: string,
    private readonly team: string,
    /** Which organisation the person picks on the sign-in page (by its name). */
    private readonly orgName: string,
    /** Whom the IdP says signed in (a hostile IdP may vouch for anyone). */
    private readonly idpSubject: string = email,
  ) {}

  /** Signs in up to Tollgate's answer after the IdP; returns the page's text when it is not the consent. */
  async signInAtIdp(page: Page, url: URL): Promise<string | null> {
    await page.goto(url.href);
    await page.getByLabel('Work email').fill(this.email);
    await page.getByRole('button', { name: "Continue with your organisation's sign-in" }).click();
    // The email picks nothing: the page asks which organisation.
    await page.getByRole('heading', { name: 'Choose your organisation' }).waitFor();
    this.offered = await page.locator('form#orgs button').allInnerTexts();
    await page.getByRole('button', { name: this.orgName, exact: true }).click();
    // At the IdP's sign-in step: the fixture signs in whoever its interaction URL names.
    await page.waitForURL(
      (u) => u.origin === new URL(this.idpIssuer).origin && /^\/interaction\/[^/]+$/.test(u.pathname),
    );
    const signIn = new URL(page.url());
    signIn.searchParams.set('login', this.idpSubject);
    await page.goto(signIn.href);
    await page.waitForURL((u) => u.origin !== new URL(this.idpIssuer).origin);
    await page.locator('h1').first().waitFor();
    const heading = await page.locator('h1').first().innerText();
    return heading.startsWith('Authorise') ? null : await page.locator('body').innerText();
  }

  async authorize(url: URL): Promise<URL> {
    const context = await this.browser.newContext();
    try {
      const page = await context.newPage();
      const refused = await this.signInAtIdp(page, url);
      if (refused) throw new Error(`sign-in refused: ${refused.slice(0, 300)}`);
      await page
        .getByRole('heading', { name: /^Authorise / })
        .waitFor({ timeout: 15_000 })
        .catch(async (err: Error) => {
          throw new Error(
            `no consent page: at ${page.url()}: ${(
              await page
                .locator('body')
                .innerText()
                .catch(() => '')
            ).slice(0, 300)} (${err.message.split('\n')[0]})`,
          );
        });
      await page.getByLabel('Act for the team').selectOption({ label: this.team });
      // The browser is sent to the redirect URI, where nothing listens: the code is read from the
      // request it makes (the headless shell does not let a route answer a redirected navigation).
      const callback = page.waitForRequest((request) => request.url().startsWith(REDIRECT_URL));
      await page.getByRole('button', { name: 'Allow' }).click();
      return new URL((await callback).url());
    } finally {
      await context.close();
    }
  }
}

describe('OAuth in a real browser, signing in at the organisation IdP', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let fixture: FixtureServer;
  let idp: AuthorizationServer;
  let browser: Browser;
  let orgId: string;
  let userId: string;
  let edgeUrl: string;
  let adminUrl: string;

  /** Registers Tollgate as a client at an oidc-provider fixture, as an org admin does at their IdP. */
  async function registerAtIdp(issuer: string): Promise<{ client_id: string; client_secret: string }> {
    return (await (
      await fetch(`${issuer}/reg`, {
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
  }

  beforeAll(async () => {
    const [adminPort, edgePort] = [await freePort(), await freePort()];
    adminUrl = `http://127.0.0.1:${adminPort}`;
    edgeUrl = `http://127.0.0.1:${edgePort}`;
    p = await startPlatform({
      ADMIN_PORT: String(adminPort),
      EDGE_PORT: String(edgePort),
      ADMIN_PUBLIC_URL: adminUrl,
      EDGE_PUBLIC_URL: edgeUrl,
    });
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startFixtureServer();
    idp = await startAuthorizationServer();
    browser = await workerChromium();

    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Initech', slug: 'initech' })).body.id;
    const ops = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'ops' })).body.id;
    const research = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'research' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'milton@initech.test' })).body.id;
    for (const team of [ops, research])
      expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${team}/members`, { userId })).status).toBe(201);

    const reg = await registerAtIdp(idp.issuer);
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/identity-provider`, {
          issuer: idp.issuer,
          clientId: reg.client_id,
          clientSecret: reg.client_secret,
        })
      ).status,
    ).toBe(200);

    const upstream = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'fx',
      transport: 'STREAMABLE_HTTP',
      url: fixture.url,
      callTimeoutMs: 5000,
    });
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstream.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fx:*'], deny: [] })).status,
    ).toBe(200);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: upstream.body.id,
          toolPattern: '*',
          perCallMicros: PRICE_PER_PING,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'TEAM',
          scopeId: research,
          period: 'MONTH',
          limitMicros: PRICE_PER_PING * CALLS_ALLOWED,
        })
      ).status,
    ).toBe(200);
  });

  afterAll(async () => {
    await closeContexts(browser);
    await idp?.close();
    await fixture?.close();
    await db?.$disconnect();
    await p?.close();
  });

  it('should sign in at the IdP, consent for a team, and bill the SDK client calls to the OAuth key until the budget refuses and revocation stops it', async () => {
    const auth = new TestOAuthProvider(
      new ChromiumPerson(browser, idp.issuer, 'milton@initech.test', 'research', 'Initech'),
      'Browser Agent',
    );
    const client: Client = await connectByOAuth(edgeUrl, auth, 'browser-agent');
    const key = (
      (await p.admin('GET', `/v1/orgs/${orgId}/keys`)).body as {
        id: string;
        kind: string;
        oauthClientName: string;
        teamId: string;
      }[]
    ).find((k) => k.kind === 'OAUTH')!;
    expect(key.oauthClientName).toBe('Browser Agent');

    const callIds: string[] = [];
    for (let i = 0; i < CALLS_ALLOWED; i++) {
      const res = await client.callTool({ name: 'fx__ping', arguments: {} });
      expect(res.isError).toBeFalsy();
      callIds.push(callMeta(res as never)!.callId);
    }
    expect(toolError((await client.callTool({ name: 'fx__ping', arguments: {} })) as never)?.code).toBe(
      'BUDGET_EXCEEDED',
    );
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, callIds);
    expect(await db.usageEvent.count({ where: { orgId, keyId: key.id, userId } })).toBe(CALLS_ALLOWED);

    expect((await p.admin('POST', `/v1/orgs/${orgId}/keys/${key.id}/revoke`)).status).toBe(200);
    const token = auth.saved!.access_token;
    const deadline = Date.now() + 1000;
    let status = 0;
    do {
      const res = await fetch(`${edgeUrl}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      await res.text();
      status = res.status;
    } while (status !== 401 && Date.now() < deadline);
    expect(status).toBe(401);
    await client.close();
  });

  it("should let no email pick an org, refuse another org's IdP vouching for a claimed address, and refuse creating users in a claimed domain", async () => {
    // The attacker: an org admin of another org, with an IdP they control and a user bearing Milton's email.
    const evilIdp = await startAuthorizationServer();
    try {
      const evilOrg = (await p.admin('POST', '/v1/orgs', { name: 'Evil Corp', slug: 'evil-corp' })).body.id;
      const evilTeam = (await p.admin('POST', `/v1/orgs/${evilOrg}/teams`, { name: 'ops' })).body.id;
      const evilAdmin = (
        await p.admin('POST', '/v1/admin-tokens', { role: 'ORG_ADMIN', orgId: evilOrg, name: 'evil admin' })
      ).body.secret as string;
      const planted = await p.admin('POST', `/v1/orgs/${evilOrg}/users`, { email: 'milton@initech.test' }, evilAdmin);
      expect(planted.status).toBe(201);
      await p.admin('POST', `/v1/orgs/${evilOrg}/teams/${evilTeam}/members`, { userId: planted.body.id }, evilAdmin);
      const reg = await registerAtIdp(evilIdp.issuer);
      expect(
        (
          await p.admin(
            'PUT',
            `/v1/orgs/${evilOrg}/identity-provider`,
            { issuer: evilIdp.issuer, clientId: reg.client_id, clientSecret: reg.client_secret },
            evilAdmin,
          )
        ).status,
      ).toBe(200);

      // Only a platform admin claims a domain; Initech's is claimed, and the planted user is counted.
      expect(
        (await p.admin('PUT', `/v1/orgs/${evilOrg}/email-domains/initech.test`, undefined, evilAdmin)).status,
      ).toBe(403);
      const claimed = await p.admin('PUT', `/v1/orgs/${orgId}/email-domains/initech.test`);
      expect(claimed.status).toBe(201);
      expect(claimed.body).toMatchObject({ domain: 'initech.test', usersInOtherOrgs: 1 });
      expect((await p.admin('PUT', `/v1/orgs/${evilOrg}/email-domains/INITECH.test`)).body).toMatchObject({
        code: 'EMAIL_DOMAIN_CLAIMED',
        field: 'domain',
      });
      expect((await p.admin('GET', `/v1/orgs/${orgId}/email-domains`)).body).toEqual([
        { domain: 'initech.test', createdAt: expect.any(String) },
      ]);
      // From now on the attacker cannot make another Initech address theirs.
      const refused = await p.admin('POST', `/v1/orgs/${evilOrg}/users`, { email: 'Peter@Initech.test' }, evilAdmin);
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: 'EMAIL_DOMAIN_CLAIMED', field: 'email' });
      const renamed = await p.admin(
        'PATCH',
        `/v1/orgs/${evilOrg}/users/${planted.body.id}`,
        { email: 'samir@initech.test' },
        evilAdmin,
      );
      expect(renamed).toMatchObject({ status: 409, body: { field: 'email' } });

      // Milton types his email: the page lists both organisations and chooses neither.
      const client = (await (
        await fetch(`${adminUrl}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            client_name: 'Victim Agent',
            redirect_uris: [REDIRECT_URL],
            token_endpoint_auth_method: 'none',
          }),
        })
      ).json()) as { client_id: string };
      const authorizeUrl = new URL(`${adminUrl}/oauth/authorize`);
      authorizeUrl.search = new URLSearchParams({
        client_id: client.client_id,
        response_type: 'code',
        redirect_uri: REDIRECT_URL,
        scope: 'mcp',
        resource: `${edgeUrl}/mcp`,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }).toString();
      // Lured into the attacker's organisation, whose IdP vouches for Milton: refused.
      const lured = new ChromiumPerson(browser, evilIdp.issuer, 'milton@initech.test', 'ops', 'Evil Corp');
      const context = await browser.newContext();
      try {
        const refusal = await lured.signInAtIdp(await context.newPage(), authorizeUrl);
        expect(lured.offered).toEqual(['Evil Corp', 'Initech']);
        expect(refusal).toContain(
          "This organisation's identity provider cannot sign in milton@initech.test: that address belongs to another organisation.",
        );
      } finally {
        await context.close();
      }
      const evilKeys = (await p.admin('GET', `/v1/orgs/${evilOrg}/keys`)).body as { kind: string }[];
      expect(evilKeys.filter((k) => k.kind === 'OAUTH')).toEqual([]);
    } finally {
      await evilIdp.close();
    }
  });
});
