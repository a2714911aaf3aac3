/**
 * One Lua script checks every rate-limit rule that applies to a call and, only if all pass,
 * counts the call against each: a sliding-window counter (the current fixed window plus the
 * previous one weighted by how much of it still overlaps) and a concurrency set of in-flight
 * call ids scored by deadline (an edge that dies mid-call frees its slot at the deadline).
 *
 * KEYS: per rule i: W_cur_i, W_prev_i, C_i
 * ARGV: now, callId, deadline, then per rule: limit (0 = none), windowMs, windowStartMs, maxConcurrent (0 = none)
 * Returns {1} when admitted, or {0, i, kind (1 = window, 2 = concurrency), retryAfterMs}.
 */
export const ADMIT_SCRIPT = `
local now = tonumber(ARGV[1])
local id = ARGV[2]
local deadline = tonumber(ARGV[3])
local n = #KEYS / 3
for i = 1, n do
  local base = 3 + 4 * (i - 1)
  local limit = tonumber(ARGV[base + 1])
  local windowMs = tonumber(ARGV[base + 2])
  local windowStart = tonumber(ARGV[base + 3])
  local maxConc = tonumber(ARGV[base + 4])
  if limit > 0 then
    local counts = redis.call('MGET', KEYS[3*i-2], KEYS[3*i-1])
    local cur = tonumber(counts[1] or '0')
    local prev = tonumber(counts[2] or '0')
    local overlap = 1 - (now - windowStart) / windowMs
    if prev * overlap + cur + 1 > limit then
      local retry = windowStart + windowMs - now
      if cur + 1 <= limit then
        -- Refused only by the previous window's decaying weight: admitted once
        -- prev * (1 - elapsed / windowMs) + cur + 1 <= limit.
        retry = math.ceil(windowMs * (1 - (limit - cur - 1) / prev)) - (now - windowStart)
        if retry < 1 then retry = 1 end
      end
      return {0, i, 1, retry}
    end
  end
  if maxConc > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[3*i], '-inf', now)
    if redis.call('ZCARD', KEYS[3*i]) >= maxConc then
      return {0, i, 2, 1000}
    end
  end
end
for i = 1, n do
  local base = 3 + 4 * (i - 1)
  local limit = tonumber(ARGV[base + 1])
  local windowMs = tonumber(ARGV[base + 2])
  local maxConc = tonumber(ARGV[base + 4])
  if limit > 0 then
    -- A window's counter expires once it can no longer count as the previous window.
    if redis.call('INCR', KEYS[3*i-2]) == 1 then
      redis.call('PEXPIRE', KEYS[3*i-2], windowMs * 2)
    end
  end
  if maxConc > 0 then
    redis.call('ZADD', KEYS[3*i], deadline, id)
    redis.call('PEXPIRE', KEYS[3*i], math.max(deadline - now, 1000))
  end
end
return {1}
`;

/** KEYS: the concurrency sets holding the call   ARGV: callId. Gives the call's slots back. */
export const RELEASE_SCRIPT = `
for _, k in ipairs(KEYS) do
  redis.call('ZREM', k, ARGV[1])
end
return 1
`;
