import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { QueueName } from '@tollgate/queue';
import { callMeta, toolError, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium';
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
  constructor(
    private readonly browser: Browser,
    private readonly idpIssuer: string,
    private readonly email: string,
    private readonly team: string,
  ) {}

  async authorize(url: URL): Promise<URL> {
    const context = await this.browser.newContext();
    try {
      const page = await context.newPage();
      let redirected: URL | undefined;
      await page.route(`${REDIRECT_URL}**`, (route) => {
        redirected = new URL(route.request().url());
        return route.fulfill({ status: 200, contentType: 'text/plain', body: 'You may close this window.' });
      });
      await page.goto(url.href);
      await page.getByLabel('Work email').fill(this.email);
      await page.getByRole('button', { name: "Continue with your organisation's sign-in" }).click();
      // At the IdP's sign-in step: the fixture signs in whoever its interaction URL names.
      await page.waitForURL(
        (u) => u.origin === new URL(this.idpIssuer).origin && /^\/interaction\/[^/]+$/.test(u.pathname),
      );
      const signIn = new URL(page.url());
      signIn.searchParams.set('login', this.email);
      await page.goto(signIn.href);
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
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL(`${REDIRECT_URL}**`);
      if (!redirected) throw new Error('the browser never reached the redirect URI');
      return redirected;
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

  beforeAll(async () => {
    const [adminPort, edgePort] = [await freePort(), await freePort()];
    const adminUrl = `http://127.0.0.1:${adminPort}`;
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
    browser = await launchChromium();

    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Initech', slug: 'initech' })).body.id;
    const ops = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'ops' })).body.id;
    const research = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'research' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'milton@initech.test' })).body.id;
    for (const team of [ops, research])
      expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${team}/members`, { userId })).status).toBe(201);

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
    await browser?.close();
    await idp?.close();
    await fixture?.close();
    await db?.$disconnect();
    await p?.close();
  });

  it('should sign in at the IdP, consent for a team, and bill the SDK client calls to the OAuth key until the budget refuses and revocation stops it', async () => {
    const auth = new TestOAuthProvider(
      new ChromiumPerson(browser, idp.issuer, 'milton@initech.test', 'research'),
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
});
