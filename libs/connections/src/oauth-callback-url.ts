import { ConnectionsException, ConnectionsExceptionCode } from './connections.exception';

/** The admin API route the authorization server sends users back to. */
export const OAUTH_CALLBACK_PATH = '/v1/oauth/callback';

/** The redirect URI for per-user OAuth, from the admin API's public URL (ADMIN_PUBLIC_URL). */
export function oauthCallbackUrl(adminPublicUrl: string | undefined): string {
  if (!adminPublicUrl) {
    throw new ConnectionsException(
      ConnectionsExceptionCode.NotConfigured,
      'per-user OAuth needs ADMIN_PUBLIC_URL (the admin API’s public URL, for the OAuth redirect URI)',
    );
  }
  return `${adminPublicUrl.replace(/\/+$/, '')}${OAUTH_CALLBACK_PATH}`;
}
