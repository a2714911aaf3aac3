import { SecretBox } from '@tollgate/secret-box';

/** What an upstream row keeps encrypted in `secretsEnc`. */
export interface UpstreamSecrets {
  /** Header values sent to the upstream (static secret auth: `Authorization`, API keys...). */
  headers?: Record<string, string>;
  /** The client secret of a configured or dynamically registered OAuth client. */
  oauthClientSecret?: string;
}

/** Sealed values are bound to their upstream, so a copied `secretsEnc` opens nowhere else. */
function context(upstreamId: string): string {
  return `upstream-secrets:${upstreamId}`;
}

export function sealUpstreamSecrets(box: SecretBox, upstreamId: string, secrets: UpstreamSecrets): string | null {
  const hasAny = Object.keys(secrets.headers ?? {}).length > 0 || !!secrets.oauthClientSecret;
  return hasAny ? box.sealJson(secrets, context(upstreamId)) : null;
}

export function openUpstreamSecrets(box: SecretBox, row: { id: string; secretsEnc: string | null }): UpstreamSecrets {
  return row.secretsEnc ? box.openJson<UpstreamSecrets>(row.secretsEnc, context(row.id)) : {};
}
