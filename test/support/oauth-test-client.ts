import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * Where the test clients say they want the user back; nothing listens there (the code is read from
 * the redirect). Port 2, not 1: Chromium's headless shell refuses port 1 as unsafe before a test's
 * route can answer for it.
 */
export const REDIRECT_URL = 'http://127.0.0.1:2/callback';

export { freePort } from './free-port';

/**
 * The SDK's OAuth client state, in memory. `redirectToAuthorization` hands the URL to a "browser"
 * (plain HTTP with a cookie jar, or Chromium) that signs in, consents and returns the redirect.
 */
export class TestOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  lastRedirect: URL | undefined;

  constructor(
    private readonly browser: { authorize(url: URL): Promise<URL> },
    private readonly clientName = 'Test Agent',
  ) {}

  get redirectUrl() {
    return REDIRECT_URL;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.clientName,
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  async redirectToAuthorization(url: URL) {
    this.lastRedirect = await this.browser.authorize(url);
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/**
 * The MCP authorization flow as a client app runs it: connect (401, discovery, registration,
 * the browser step), finish with the code, connect again with the token.
 */
export async function connectByOAuth(edgeUrl: string, auth: TestOAuthProvider, name = 'oauth-agent'): Promise<Client> {
  const mcpUrl = new URL(`${edgeUrl}/mcp`);
  const first = new Client({ name, version: '1.0.0' });
  const refused = await first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth })).then(
    () => null,
    (err: unknown) => err,
  );
  if (!(refused instanceof UnauthorizedError)) throw refused ?? new Error('the edge accepted a client with no token');
  const code = auth.lastRedirect?.searchParams.get('code');
  if (!code) throw new Error(`no code in the redirect: ${auth.lastRedirect?.href}`);
  await new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth }).finishAuth(code);
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth }));
  return client;
}
