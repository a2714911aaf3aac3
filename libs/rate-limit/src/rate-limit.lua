-- Rate-limit functions: every rule that applies to a call is checked and, only if all pass, the
-- call is counted against each: a sliding-window counter (the current fixed window plus the
-- previous one weighted by how much of it still overlaps) and a concurrency set of in-flight call
-- ids scored by deadline (an edge that dies mid-call frees its slot at the deadline).
-- A library, not a script: @tollgate/admission runs these functions with the budget ones (budget.lua).
--
--   K: per rule i: W_cur_i, W_prev_i, C_i
--   A: now, callId, deadline, then per rule: limit (0 = none), windowMs, windowStartMs, maxConcurrent (0 = none)
-- rl_check returns nil when every rule admits the call, or {0, i, kind (1 = window, 2 = concurrency),
-- retryAfterMs}: the ms after which the call would be admitted if nothing else is counted meanwhile.

-- Rule i's settings: limit, windowMs, windowStartMs, maxConcurrent.
local function rl_rule(A, i)
  local base = 3 + 4 * (i - 1)
  return tonumber(A[base + 1]), tonumber(A[base + 2]), tonumber(A[base + 3]), tonumber(A[base + 4])
end

-- ms from now until a window admits one more call, if no other call is counted meanwhile. The
-- estimate is prev * (W - elapsed) / W + cur: it falls while this window runs, and next window
-- this one's count becomes prev. Integer arithmetic (both sides times W), as rl_check compares.
local function rl_window_wait(cur, prev, limit, windowMs, elapsed)
  if prev * (windowMs - elapsed) + (cur + 1) * windowMs <= limit * windowMs then return 0 end
  if cur + 1 <= limit then
    -- In this window, once prev * (W - t) <= (limit - cur - 1) * W.
    local t = windowMs - math.floor((limit - cur - 1) * windowMs / prev)
    return math.max(t - elapsed, 1)
  end
  -- In the next window, once cur * (W - u) <= (limit - 1) * W (at its end, cur weighs nothing).
  local u = windowMs - math.floor(math.max(limit - 1, 0) * windowMs / cur)
  return windowMs - elapsed + u
end

-- Refuses with the rule that keeps the call out longest, so retrying after its wait finds every
-- rule admitting (a window's estimate never rises without new calls; a concurrency slot is free
-- at the latest at the earliest deadline in its set).
local function rl_check(K, A)
  local now = tonumber(A[1])
  local worst = nil
  for i = 1, #K / 3 do
    local limit, windowMs, windowStart, maxConc = rl_rule(A, i)
    if limit > 0 then
      local counts = redis.call('MGET', K[3*i-2], K[3*i-1])
      local wait = rl_window_wait(tonumber(counts[1] or '0'), tonumber(counts[2] or '0'), limit, windowMs, now - windowStart)
      if wait > 0 and (worst == nil or wait > worst[4]) then worst = {0, i, 1, wait} end
    end
    -- Slots of calls whose edge died are dropped (deadline passed) only when they would matter.
    if maxConc > 0 and redis.call('ZCARD', K[3*i]) >= maxConc then
      redis.call('ZREMRANGEBYSCORE', K[3*i], '-inf', now)
      local n = redis.call('ZCARD', K[3*i])
      if n >= maxConc then
        -- The (n - maxConc + 1)-th earliest deadline frees enough slots, if no call ends before.
        local due = redis.call('ZRANGE', K[3*i], n - maxConc, n - maxConc, 'WITHSCORES')
        local wait = math.max(math.ceil(tonumber(due[2]) - now), 1)
        if worst == nil or wait > worst[4] then worst = {0, i, 2, wait} end
      end
    end
  end
  return worst
end

-- Concurrency set c lives at least `ms` more. Its TTL is only ever raised: a slot held longer than
-- the calls admitted after it (a task's, pushed out by extend-hold.lua) must not expire with them.
local function rl_keep_set(c, ms)
  if redis.call('PTTL', c) < ms then redis.call('PEXPIRE', c, ms) end
end

local function rl_apply(K, A)
  local now = tonumber(A[1])
  local id = A[2]
  local deadline = tonumber(A[3])
  for i = 1, #K / 3 do
    local limit, windowMs, _, maxConc = rl_rule(A, i)
    if limit > 0 then
      -- A window's counter expires once it can no longer count as the previous window.
      if redis.call('INCR', K[3*i-2]) == 1 then
        redis.call('PEXPIRE', K[3*i-2], windowMs * 2)
      end
    end
    if maxConc > 0 then
      redis.call('ZADD', K[3*i], deadline, id)
      rl_keep_set(K[3*i], math.max(deadline - now, 1000))
    end
  end
end

-- K: the concurrency sets holding the call.
local function rl_release(K, id)
  for _, k in ipairs(K) do
    redis.call('ZREM', k, id)
  end
end

-- Leases (see AdmissionLeases in @tollgate/admission): an edge takes a block of a rule's allowance and admits
-- calls against it without a round trip. A lease takes at most 1/div of what is left, so edges
-- leasing at once leave room for each other, and nothing when that is under minGrant.

-- Up to `want` calls of the current window (cur, prev as in rl_check), counted now. Returns the grant.
local function rl_lease_window(cur, prev, now, limit, windowMs, windowStart, want, minGrant, div)
  local counts = redis.call('MGET', cur, prev)
  local c = tonumber(counts[1] or '0')
  local p = tonumber(counts[2] or '0')
  local room = math.floor((limit - p * (1 - (now - windowStart) / windowMs) - c) / div)
  local grant = math.min(want, room)
  if grant < minGrant or grant <= 0 then return 0 end
  if redis.call('INCRBY', cur, string.format('%d', grant)) == grant then redis.call('PEXPIRE', cur, windowMs * 2) end
  return grant
end

-- Gives back n calls of a window lease that were not used.
local function rl_lease_window_release(cur, n)
  if n > 0 and redis.call('EXISTS', cur) == 1 then redis.call('DECRBY', cur, string.format('%d', n)) end
end

-- Up to `want` concurrency slots of set c, as members prefix..first, prefix..(first+1), ... held
-- until `deadline` (renewed while the lease lives). Returns the grant.
local function rl_lease_slots(c, now, deadline, max, want, minGrant, div, prefix, first)
  local n = redis.call('ZCARD', c)
  if math.floor((max - n) / div) < want then
    redis.call('ZREMRANGEBYSCORE', c, '-inf', now)
    n = redis.call('ZCARD', c)
  end
  local grant = math.min(want, math.floor((max - n) / div))
  if grant < minGrant or grant <= 0 then return 0 end
  local args = {}
  for i = 0, grant - 1 do
    args[#args+1] = deadline
    args[#args+1] = prefix .. (first + i)
  end
  redis.call('ZADD', c, unpack(args))
  rl_keep_set(c, math.max(deadline - now, 1000))
  return grant
end
