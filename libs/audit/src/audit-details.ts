import { REDACTED, SECRET_KEYS, TOLLGATE_SECRET_VALUE as SECRET_VALUE } from '@tollgate/kernel';

export { REDACTED };

/**
 * A JSON-safe copy of audit details with secrets removed: secret-named keys are dropped, header
 * maps keep only their names, issued secrets inside strings are masked, bigints become numbers
 * (or strings beyond 2^53). Callers pass explicit details; this is the second line of defence.
 */
export function scrubAuditDetails(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (typeof value === 'string') return value.replace(SECRET_VALUE, REDACTED);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(scrubAuditDetails);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue;
      const key = k.toLowerCase();
      if (SECRET_KEYS.has(key)) continue;
      if (key === 'headers' && v && typeof v === 'object' && !Array.isArray(v)) {
        out.headerNames = Object.keys(v as Record<string, unknown>).sort();
        continue;
      }
      out[k] = scrubAuditDetails(v);
    }
    return out;
  }
  return value;
}

/** A URL with any password masked, for views and audit rows. */
export function redactUrl(url: string | null): string | null {
  if (!url) return url;
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}
