/** A registration request larger than this (serialised JSON) is refused before anything is stored. */
export const REGISTRATION_BODY_LIMIT_BYTES = 8 * 1024;
export const MAX_REDIRECT_URIS = 10;
export const MAX_CLIENT_NAME_CHARS = 200;
/** Any other string field of the metadata (URIs, contacts...). */
export const MAX_METADATA_STRING_CHARS = 2000;
const MAX_ARRAY_ITEMS = 10;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** A refused registration, as RFC 7591 §3.2.2 words it. */
export interface RegistrationProblem {
  error: 'invalid_client_metadata' | 'invalid_redirect_uri';
  error_description: string;
}

/** `http://` on a loopback host: the only plain-http redirect a native client may use (RFC 8252 §7.3). */
export function isLoopbackRedirect(uri: string): boolean {
  const url = URL.parse(uri);
  return url !== null && url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * What is wrong with a dynamic registration's metadata before oidc-provider sees it: its size,
 * too many or too long values, a plain-http redirect that is not loopback. Null when acceptable.
 */
export function registrationProblem(body: unknown): RegistrationProblem | null {
  const bad = (error_description: string): RegistrationProblem => ({
    error: 'invalid_client_metadata',
    error_description,
  });
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return bad('the metadata must be a JSON object');
  const size = Buffer.byteLength(JSON.stringify(body));
  if (size > REGISTRATION_BODY_LIMIT_BYTES)
    return bad(`the metadata is ${size} bytes; at most ${REGISTRATION_BODY_LIMIT_BYTES} are accepted`);
  for (const [field, value] of Object.entries(body as Record<string, unknown>)) {
    const limit = field === 'client_name' ? MAX_CLIENT_NAME_CHARS : MAX_METADATA_STRING_CHARS;
    if (typeof value === 'string' && value.length > limit)
      return bad(`${field} is ${value.length} characters; at most ${limit}`);
    if (Array.isArray(value)) {
      const max = field === 'redirect_uris' ? MAX_REDIRECT_URIS : MAX_ARRAY_ITEMS;
      if (value.length > max) return bad(`${field} has ${value.length} entries; at most ${max}`);
      const long = value.find((v) => typeof v === 'string' && v.length > MAX_METADATA_STRING_CHARS);
      if (long !== undefined) return bad(`an entry of ${field} is longer than ${MAX_METADATA_STRING_CHARS} characters`);
    }
  }
  const redirects = (body as { redirect_uris?: unknown }).redirect_uris;
  if (Array.isArray(redirects)) {
    for (const uri of redirects) {
      const url = typeof uri === 'string' ? URL.parse(uri) : null;
      if (url?.protocol === 'http:' && !isLoopbackRedirect(uri as string))
        return {
          error: 'invalid_redirect_uri',
          error_description: `redirect_uris: ${String(uri).slice(0, 200)} is plain http on a host that is not loopback; use https, or http://127.0.0.1, http://[::1] or http://localhost`,
        };
    }
  }
  return null;
}
