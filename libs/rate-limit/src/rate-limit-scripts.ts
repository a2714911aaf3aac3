import { readLuaFile, replyArray, replyInt } from '@tollgate/redis';

/**
 * The rate-limit functions in Lua (rate-limit.lua): check, count, release and lease, for the
 * scripts of @tollgate/admission, which run them with the budget reservation. Read from the file
 * beside this module.
 */
export const RATE_LIMIT_LUA = readLuaFile(__dirname, 'rate-limit.lua');

/** rl_check's refusal: the rule (0-based), which of its limits, and when the call would be admitted. */
export interface RateLimitCheckRefusal {
  index: number;
  kind: 'WINDOW' | 'CONCURRENCY';
  retryAfterMs: number;
}

/** Reads rl_check's refusal, {0, rule, kind (1 window, 2 concurrency), retryAfterMs} (see rate-limit.lua). */
export function decodeRateLimitRefusal(reply: unknown): RateLimitCheckRefusal {
  const r = replyArray(reply);
  const kind = replyInt(r[2]);
  if (kind !== 1 && kind !== 2) throw new Error(`rate-limit script: unknown refusal kind ${kind}`);
  return { index: replyInt(r[1]) - 1, kind: kind === 1 ? 'WINDOW' : 'CONCURRENCY', retryAfterMs: replyInt(r[3]) };
}
