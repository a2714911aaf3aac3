import Provider, { errors } from 'oidc-provider';
import { OAUTH_KEY_CLAIM } from '@tollgate/identity';
import type { OAuthKeyMaterial } from './oauth-keys';
import { clientMetadataDocumentProblem } from './client-metadata-document';
import { isLoopbackRedirect } from './oauth-registration-rules';

/** The scope an MCP client asks for: calling the tools the key's team may use, through the edge. */
export const MCP_SCOPE = 'mcp';

/** Where the authorization server's endpoints live on the admin API's origin. */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  end_session: '/oauth/logout',
  userinfo: '/oauth/userinfo',
  introspection: '/oauth/introspect',
  pushed_authorization_request: '/oauth/par',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
} as const;

/** The sign-in and consent pages (served by the app, not by oidc-provider). */
export const OAUTH_INTERACTION_PATH = '/oauth/interaction';

export interface OAuthServerOptions {
  /** The issuer: the admin API's public URL (no path). */
  issuer: string;
  /** The one resource tokens are issued for: the edge's `/mcp` URL. */
  resource: string;
  /** oidc-provider's storage (see `oauthStoreAdapter`). */
  adapter: new (model: string) => unknown;
  keys: OAuthKeyMaterial;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** The user a subject names, for the userinfo claims; null when gone. */
  findUser(sub: string): Promise<{ email: string } | null>;
  /**
   * The live key (kind OAUTH) a token from this grant stands for, made on the grant's first token
   * (the code's redemption); null when the key was revoked or the grant is unknown.
   */
  keyIdOfGrant(grantId: string): Promise<string | null>;
  /** Outbound fetch under the address rule (Client ID Metadata Documents). */
  fetch: typeof fetch;
}

/** The oidc-provider instance (untyped: the library ships no types). */
export type OAuthProvider = any;

/**
 * Tollgate's OAuth 2.1 authorization server, on oidc-provider: authorization code with PKCE
 * (S256), dynamic client registration and Client ID Metadata Documents, resource indicators
 * limited to the edge, `iss` in authorization responses, rotating refresh tokens, revocation.
 * Access tokens are opaque and kept in Redis, so revoking a token or a grant stops it at the
 * edge at once; each carries the id of the key it stands for.
 */
export function createOAuthProvider(opts: OAuthServerOptions): OAuthProvider {
  const provider = new Provider(opts.issuer, {
    adapter: opts.adapter,
    clients: [],
    jwks: opts.keys.jwks,
    cookies: {
      keys: opts.keys.cookieKeys,
      // Own names: an IdP on the same host (ports share cookies) may run oidc-provider too.
      names: { session: 'tg_oauth_session', interaction: 'tg_oauth_interaction', resume: 'tg_oauth_resume' },
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    routes: OAUTH_ROUTES,
    scopes: [MCP_SCOPE, 'offline_access'],
    claims: { email: ['email'] },
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    features: {
      devInteractions: { enabled: false },
      // No registration access token: nothing reads or edits a client after registering it.
      registration: { enabled: true, issueRegistrationAccessToken: false },
      revocation: { enabled: true },
      userinfo: { enabled: false },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => opts.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (indicator !== opts.resource)
            throw new errors.InvalidTarget(`tokens are issued for ${opts.resource} only`);
          return {
            scope: MCP_SCOPE,
            audience: opts.resource,
            accessTokenTTL: opts.accessTokenTtlSeconds,
            accessTokenFormat: 'opaque',
          };
        },
      },
    },
    fetch: opts.fetch,
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(t: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    // Every token names the key it stands for; a revoked key gets no new tokens.
    extraTokenClaims: async (_ctx: unknown, token: { grantId?: string }) => {
      const keyId = token.grantId ? await opts.keyIdOfGrant(token.grantId) : null;
      if (!keyId) throw new errors.InvalidGrant('the authorization was withdrawn (its key is revoked)');
      return { [OAUTH_KEY_CLAIM]: keyId };
    },
    findAccount: async (_ctx: unknown, sub: string) => {
      const user = await opts.findUser(sub);
      if (!user) return undefined;
      return { accountId: sub, claims: async () => ({ sub, email: user.email, email_verified: true }) };
    },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) => `${OAUTH_INTERACTION_PATH}/${interaction.uid}`,
    },
    ttl: {
      AccessToken: opts.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      RefreshToken: opts.refreshTokenTtlSeconds,
      Grant: opts.refreshTokenTtlSeconds,
      Session: 14 * 86_400,
      Interaction: 600,
    },
    renderError: async (ctx: any, out: Record<string, string>, error: unknown) => {
      // A plain page: the error is the RFC's (error, error_description), escaped.
      const problem = clientMetadataDocumentProblem(error);
      if (problem) out = { ...out, error_description: `the client's metadata document cannot be used: ${problem}` };
      ctx.type = 'html';
      ctx.body = `<!doctype html><meta charset="utf-8"><title>Authorization error</title><h1>${escapeHtml(out.error ?? 'error')}</h1><p>${escapeHtml(out.error_description ?? '')}</p>`;
    },
  });
  provider.proxy = true;
  allowAnyLoopbackPort(provider);
  return provider;
}

/**
 * RFC 8252 §7.3: a loopback redirect URI matches whatever port the client listens on at the
 * time. oidc-provider does so for `native` clients only; MCP clients register as `web`.
 */
function allowAnyLoopbackPort(provider: OAuthProvider): void {
  const proto = provider.Client.prototype;
  const exact = proto.redirectUriAllowed as (this: { redirectUris: string[] }, uri: string) => boolean;
  proto.redirectUriAllowed = function (this: { redirectUris: string[] }, uri: string): boolean {
    if (exact.call(this, uri)) return true;
    const asked = withoutPort(uri);
    return asked !== null && this.redirectUris.some((registered) => withoutPort(registered) === asked);
  };
}

function withoutPort(uri: string): string | null {
  if (!isLoopbackRedirect(uri)) return null;
  const url = new URL(uri);
  url.port = '';
  return url.href;
}

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}
