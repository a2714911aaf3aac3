/** Keys whose values are secrets whatever they hold (compared lower-case): never kept in an audit row or a trail. */
export const SECRET_KEYS: ReadonlySet<string> = new Set([
  'secret',
  'secrethash',
  'password',
  'token',
  'accesstoken',
  'refreshtoken',
  'authorization',
  'apikey',
  'secretsenc',
]);

/** A Tollgate secret (virtual key `tg_…`, admin token `tga_…`) inside any string. */
export const TOLLGATE_SECRET_VALUE = /\btga?_[0-9A-Za-z]{40}\b/g;

export const REDACTED = '[redacted]';

// Names that mark a secret whatever their spelling (api_key, x-api-key, clientSecret, session_token...).
const SECRET_KEY_PART = /secret|passw|token|authori[sz]ation|api[-_]?key|cookie|credential|private[-_]?key/i;
// Values that look like credentials wherever they stand: Tollgate's own, bearer/basic credentials,
// JWTs, and the prefixes of common providers' keys (OpenAI/Anthropic sk-, GitHub gh?_, Slack xox?-, AWS AKIA).
const SECRET_LOOKING_VALUES: readonly RegExp[] = [
  TOLLGATE_SECRET_VALUE,
  /\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}/g,
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
];

/**
 * A JSON-safe copy of agent-supplied content with everything secret-looking removed: values of
 * secret-named keys become REDACTED, header maps keep only their names, and credential-shaped
 * substrings of any string are masked. For content kept for people to read later (the trail), where
 * a missed secret would sit in Postgres for the retention period: it errs on the side of masking.
 */
export function scrubSecrets(value: unknown, depth = 0): unknown {
  if (depth > 32) return REDACTED;
  if (typeof value === 'string') {
    let out = value;
    for (const pattern of SECRET_LOOKING_VALUES) out = out.replace(pattern, REDACTED);
    return out;
  }
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map((v) => scrubSecrets(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue;
      if (SECRET_KEYS.has(k.toLowerCase()) || SECRET_KEY_PART.test(k)) {
        out[k] = REDACTED;
        continue;
      }
      if (k.toLowerCase() === 'headers' && v && typeof v === 'object' && !Array.isArray(v)) {
        out.headerNames = Object.keys(v as Record<string, unknown>).sort();
        continue;
      }
      out[k] = scrubSecrets(v, depth + 1);
    }
    return out;
  }
  return value;
}
