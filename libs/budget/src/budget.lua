-- Budget functions: reserve and settle spend against every budget of a call at once, and leases.
-- A library, not a script: admission-and-reserve, complete-calls and the lease scripts of
-- @tollgate/admission run these functions together with the rate-limit ones (rate-limit.lua).
--
-- Each budget period has one counter hash H (spent, reserved, leased), seeded by seed-counter.lua
-- with the period's expiry. An organisation's reservations in flight are kept once per call, not
-- once per budget: a hash R (reservation id -> "amount|H1|H2|...") and a sorted set Z of
-- reservation ids scored by deadline. A reservation whose edge died is swept when its deadline
-- passes, by the next reservation in the organisation; no extra process is needed. Every key
-- carries the organisation's hash tag, so the scripts run on Redis Cluster.
--
--   K: R, Z, H1, H2, ...
--   A (reserve): now, reservationId, deadline, amount, then per budget: limit, hard (1/0)
-- budget_check returns {1, spent1, reserved1, leased1, ...} (the standings before this reservation),
--   {0, index, spent, reserved, leased} when budget `index` (1-based) is hard and short,
--   {-1, index} when budget `index` has no counter yet (the caller seeds it from the ledger),
--   {-2, index} when its counter holds a field that is not an integer (refused until reconciliation
--   rebuilds it from the ledger: the counter cannot be trusted, and HINCRBY would fail on it);
-- budget_apply then reserves and returns {1, spent1, reserved1, leased1, spent2, ...};
-- budget_settle(K, id, actual) returns {spent1, reserved1, leased1, ...}.
--
-- Amounts in every answer are decimal strings: a client may decode an integer reply near 2^53
-- wrongly (ioredis reads 9007199254740991 as ...992). Statuses and indexes are integers.
--
-- Leases: an edge may hold a block of one counter's allowance (`leased`) and admit calls against
-- it without a round trip (AdmissionLeases in @tollgate/admission). A lease is a record in R like
-- a reservation, with an id starting `L:` and one counter (R[id] = H, R[id#] = the amount held),
-- swept at its deadline like one; calls admitted under it turn part of it into `spent`
-- (budget_lease_convert). A hard budget admits a call only if spent + reserved + leased + amount
-- fits, so leases never let it overspend.

-- At most this many expired reservations are swept per reservation, so no call pays for a backlog at once.
local BUDGET_SWEEP_BATCH = 100

local function budget_fmt(n) return string.format('%d', n) end

-- The largest amount a Lua number holds exactly (2^53 - 1); the API takes no larger one.
local BUDGET_LARGEST = 9007199254740991

-- HINCRBY of a computed amount, answering the field as Redis holds it (a string: a sum past 2^53,
-- a soft budget's spent, is exact in Redis but not as a Lua number). Lua formats a negated zero as
-- "-0", which Redis refuses: adding 0 (a free call, a reservation of 0) writes nothing.
local function budget_incr(h, f, n)
  if n ~= 0 then redis.call('HINCRBY', h, f, budget_fmt(n)) end
  return redis.call('HGET', h, f) or '0'
end

-- A record's amount: a non-negative integer, or nil when the record is malformed.
local function budget_amount(v)
  local n = tonumber(v)
  if n and n >= 0 and n == math.floor(n) then return n end
  return nil
end

-- Whether a counter's fields (HMGET spent, reserved, leased: false where absent) are integers.
local function budget_fields_ok(v)
  for i = 1, 3 do
    local n = v[i] and tonumber(v[i])
    if v[i] and (not n or n ~= math.floor(n)) then return false end
  end
  return true
end

-- Whether h may be written as a counter of R's organisation: named in R's organisation (so in its
-- Redis Cluster slot) and either absent or a hash whose fields are integers. Checked before any
-- write, so a malformed record or counter never makes a script fail half-way.
local function budget_counter_ok(r, h)
  local base = string.sub(r, 1, #r - #'budget-resv') .. 'budget:'
  if string.sub(h, 1, #base) ~= base then return false end
  local t = redis.call('TYPE', h)['ok']
  if t == 'none' then return true end
  if t ~= 'hash' then return false end
  return budget_fields_ok(redis.call('HMGET', h, 'spent', 'reserved', 'leased'))
end

-- A record the sweep or a settlement could not use is moved aside (R:malformed, same slot) for
-- reconciliation to report and audit; its counters are repaired by reconciliation.
local function budget_quarantine(r, id, rec)
  redis.call('HSET', r .. ':malformed', id, rec)
end

-- Sweeps reservations whose edge never settled them. A counter that has expired or was lost is
-- left alone (decrementing it would create a counter without its ledger history). A malformed
-- record is skipped and moved aside, never an error: it must not block admission.
local function budget_sweep(r, z, now)
  local expired = redis.call('ZRANGEBYSCORE', z, '-inf', now, 'LIMIT', 0, BUDGET_SWEEP_BATCH)
  for _, old in ipairs(expired) do
    local rec = redis.call('HGET', r, old)
    if rec and string.sub(old, 1, 2) == 'L:' then
      -- A lease: rec is its counter, the amount it still holds is field id#.
      local held = redis.call('HGET', r, old .. '#')
      local amt = budget_amount(held or '0')
      if amt == nil or not budget_counter_ok(r, rec) then
        budget_quarantine(r, old, rec .. '#' .. tostring(held))
      elseif amt > 0 and redis.call('HEXISTS', rec, 'spent') == 1 then
        budget_incr(rec, 'leased', -amt)
      end
      redis.call('HDEL', r, old, old .. '#')
    elseif rec then
      local parts = {}
      for part in string.gmatch(rec, '[^|]+') do parts[#parts+1] = part end
      local amt = budget_amount(parts[1])
      local ok = amt ~= nil
      for i = 2, #parts do
        if ok and not budget_counter_ok(r, parts[i]) then ok = false end
      end
      if ok then
        for i = 2, #parts do
          if redis.call('HEXISTS', parts[i], 'spent') == 1 then budget_incr(parts[i], 'reserved', -amt) end
        end
      else
        budget_quarantine(r, old, rec)
      end
      redis.call('HDEL', r, old)
    end
    redis.call('ZREM', z, old)
  end
end

local function budget_check(K, A)
  budget_sweep(K[1], K[2], tonumber(A[1]))
  local amount = tonumber(A[4])
  local out = {1}
  for i = 1, #K - 2 do
    local v = redis.call('HMGET', K[2 + i], 'spent', 'reserved', 'leased')
    if not v[1] then return {-1, i} end
    if not budget_fields_ok(v) then return {-2, i} end
    local spent, reserved, leased = v[1], v[2] or '0', v[3] or '0'
    local limit = tonumber(A[4 + 2*(i-1) + 1])
    local hard = A[4 + 2*(i-1) + 2] == '1'
    if hard and tonumber(spent) + tonumber(reserved) + tonumber(leased) + amount > limit then
      return {0, i, spent, reserved, leased}
    end
    out[#out+1] = spent
    out[#out+1] = reserved
    out[#out+1] = leased
  end
  return out
end

-- checked: budget_check's {1, spent1, reserved1, ...}
local function budget_apply(K, A, checked)
  local id = A[2]
  local deadline = tonumber(A[3])
  local amount = tonumber(A[4])
  local out = {1}
  local rec = {budget_fmt(amount)}
  for i = 1, #K - 2 do
    out[#out+1] = checked[3*i - 1]
    out[#out+1] = budget_incr(K[2 + i], 'reserved', amount)
    out[#out+1] = checked[3*i + 1]
    rec[#rec+1] = K[2 + i]
  end
  redis.call('HSET', K[1], id, table.concat(rec, '|'))
  redis.call('ZADD', K[2], deadline, id)
  return out
end

-- Drops the reservation (if the sweeper has not already) and adds the actual cost to spent, even
-- for a swept reservation: the ledger will hold the call, so the counter must too. A counter that
-- no longer exists (lost, or evicted) is not created here: the next reservation seeds it from the
-- ledger.
local function budget_settle(K, id, actual)
  local rec = redis.call('HGET', K[1], id)
  local amt = nil
  if rec then
    amt = budget_amount(string.match(rec, '^[^|]+'))
    if amt == nil then budget_quarantine(K[1], id, rec) end
    redis.call('HDEL', K[1], id)
    redis.call('ZREM', K[2], id)
  end
  local out = {}
  for i = 3, #K do
    local h = K[i]
    if redis.call('HEXISTS', h, 'spent') == 1 then
      out[#out+1] = budget_incr(h, 'spent', actual)
      if amt then
        out[#out+1] = budget_incr(h, 'reserved', -amt)
      else
        out[#out+1] = redis.call('HGET', h, 'reserved') or '0'
      end
      out[#out+1] = redis.call('HGET', h, 'leased') or '0'
    else
      out[#out+1] = '0'
      out[#out+1] = '0'
      out[#out+1] = '0'
    end
  end
  return out
end

-- Leases (R, Z: the organisation's records and deadlines; H: one counter; id: the lease, 'L:...').
-- A lease's record is R[id] = H and R[id#] = the amount it holds, so using it costs one HINCRBY.
-- Grants up to `want` more of H's allowance to lease id, and at most 1/div of what is left of a hard
-- budget, so edges leasing at once leave room for each other; nothing when that is under minGrant.
-- Returns {granted, spent, reserved, leased} (strings), or {'-1', '0', '0', '0'} when H has no
-- counter (seed it first).
local function budget_lease(r, z, h, id, deadline, want, minGrant, limit, hard, div)
  local v = redis.call('HMGET', h, 'spent', 'reserved', 'leased')
  if not v[1] then return {'-1', '0', '0', '0'} end
  -- A corrupt counter grants nothing: the call goes to Redis, which refuses it (budget_check).
  if not budget_fields_ok(v) then return {'0', '0', '0', '0'} end
  local spent, reserved, leased = v[1], v[2] or '0', v[3] or '0'
  -- A counter's leases stay within 2^53 - 1 in all (a soft budget grants what is asked), so every
  -- lease amount the scripts add or take back is exact.
  local grant = math.min(want, BUDGET_LARGEST - tonumber(leased))
  if hard then
    local room = math.floor((limit - tonumber(spent) - tonumber(reserved) - tonumber(leased)) / div)
    if room < grant then grant = room end
  end
  if grant < minGrant or grant <= 0 then return {'0', spent, reserved, leased} end
  redis.call('HSET', r, id, h)
  redis.call('HINCRBY', r, id .. '#', budget_fmt(grant))
  redis.call('ZADD', z, deadline, id)
  return {budget_fmt(grant), spent, reserved, budget_incr(h, 'leased', grant)}
end

-- Calls admitted under lease id cost `actual` in all: it moves from leased to spent (three HINCRBYs).
-- Returns {1, spent, leased}; {0, spent, leased} when the lease was swept (its edge was too slow
-- to renew it; the cost is still charged); {-1, '0', '0'} when H was lost (it is not re-created
-- here, and the lease is dropped). Spent and leased are strings.
local function budget_lease_convert(r, h, id, actual)
  if actual == 0 then
    -- Nothing moves: answer the lease's state as a conversion would, without writing.
    if redis.call('HEXISTS', h, 'spent') == 0 then return {-1, '0', '0'} end
    local v = redis.call('HMGET', h, 'spent', 'leased')
    return {redis.call('HEXISTS', r, id .. '#'), v[1], v[2] or '0'}
  end
  local held = redis.call('HGET', r, id .. '#')
  if held and budget_amount(held) == nil then
    budget_quarantine(r, id, tostring(redis.call('HGET', r, id)) .. '#' .. held)
    redis.call('HDEL', r, id)
    held = nil
  end
  local left = -1
  if held then left = redis.call('HINCRBY', r, id .. '#', budget_fmt(-actual)) end
  if left < 0 then
    -- Swept: nothing of it is in leased any more.
    redis.call('HDEL', r, id .. '#')
    if redis.call('HEXISTS', h, 'spent') == 0 then return {-1, '0', '0'} end
    return {0, budget_incr(h, 'spent', actual), redis.call('HGET', h, 'leased') or '0'}
  end
  local leased = redis.call('HINCRBY', h, 'leased', budget_fmt(-actual))
  if leased < 0 then
    -- The counter was lost (HINCRBY just made a new one) or rebuilt from the ledger without this lease.
    if redis.call('HEXISTS', h, 'spent') == 0 then
      redis.call('DEL', h)
    else
      redis.call('HINCRBY', h, 'leased', budget_fmt(actual))
    end
    redis.call('HDEL', r, id, id .. '#')
    return {-1, '0', '0'}
  end
  return {1, budget_incr(h, 'spent', actual), redis.call('HGET', h, 'leased')}
end

-- Gives `amount` of lease id back (all of it, and the record, when it holds no more); returns what went back.
local function budget_lease_release(r, z, h, id, amount)
  local raw = redis.call('HGET', r, id .. '#')
  if not raw then return 0 end
  local held = budget_amount(raw)
  if held == nil or not budget_counter_ok(r, h) then
    budget_quarantine(r, id, tostring(redis.call('HGET', r, id)) .. '#' .. raw)
    redis.call('HDEL', r, id, id .. '#')
    redis.call('ZREM', z, id)
    return 0
  end
  if amount >= held then
    amount = held
    redis.call('HDEL', r, id, id .. '#')
    redis.call('ZREM', z, id)
  elseif amount > 0 then
    redis.call('HINCRBY', r, id .. '#', budget_fmt(-amount))
  end
  if amount > 0 and redis.call('HEXISTS', h, 'spent') == 1 then budget_incr(h, 'leased', -amount) end
  return amount
end
