import { createHash } from 'node:crypto';

/** The claim of an OAuth access token that names the key (kind OAUTH) it stands for. */
export const OAUTH_KEY_CLAIM = 'tg_key';

/**
 * Where the authorization server keeps an OAuth artefact (access token, grant, session...) in
 * Redis: the id is hashed, so a dump of Redis holds no usable token.
 */
export function oauthStoreKey(prefix: string, model: string, id: string): string {
  return `${prefix}:oauth:${model}:${createHash('sha256').update(id).digest('base64url')}`;
}

/** The part of a stored opaque access token the edge reads (oidc-provider's payload). */
export interface StoredOAuthAccessToken {
  exp?: number;
  aud?: string | string[];
  clientId?: string;
  grantId?: string;
  scope?: string;
  extra?: Record<string, unknown>;
}

/** oidc-provider's opaque tokens: 43 base64url characters (256 bits). */
export function looksLikeOAuthAccessToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(token);
}
