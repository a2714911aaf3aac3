/**
 * Lua that reserves and settles spend against every budget of a call at once.
 *
 * Each budget period has one counter hash H (`spent`, `reserved`), created by SEED_SCRIPT with the
 * period's expiry. An organisation's reservations in flight are kept once per call, not once per
 * budget: a hash R (reservation id -> "amount|H1|H2|...") and a sorted set Z of reservation ids
 * scored by deadline. A reservation whose edge died is swept when its deadline passes, by the next
 * reservation in the organisation; no extra process is needed.
 * All keys carry the organisation's hash tag, so the scripts run on Redis Cluster (a sweep touches
 * counters of the same organisation, hence the same slot).
 *
 * The functions take their keys and arguments as tables, so the edge can run them in one script
 * with the rate limits (see BUDGET_LUA users):
 *   K: R, Z, H1, H2, ...
 *   A (reserve): now, reservationId, deadline, amount, then per budget: limit, hard (1/0)
 * budget_check returns {1, spent1, reserved1, leased1, ...} (the standings before this reservation),
 *   {0, index, spent, reserved, leased} when budget `index` (1-based) is hard and short,
 *   {-1, index} when budget `index` has no counter yet (the caller seeds it from the ledger);
 * budget_apply then reserves and returns {1, spent1, reserved1, leased1, spent2, ...};
 * budget_settle(K, id, actual) returns {spent1, reserved1, leased1, ...}.
 *
 * Leases: an edge may hold a block of one counter's allowance (`leased`) and admit calls against
 * it without a round trip (see AdmissionLeases in @tollgate/admission). A lease is a record in R like a
 * reservation, with an id starting `L:` and one counter ("amount|H"), swept at its deadline like
 * one; calls admitted under it turn part of it into `spent` (budget_lease_convert). A hard budget
 * admits a call only if spent + reserved + leased + amount fits, so leases never let it overspend.
 */

/** At most this many expired reservations are swept per reservation, so no call pays for a backlog at once. */
const SWEEP_BATCH = 100;

export const BUDGET_LUA = `
local function budget_fmt(n) return string.format('%d', n) end

-- Sweeps reservations whose edge never settled them. A counter that has expired or was lost is
-- left alone (decrementing it would create a counter without its ledger history).
local function budget_sweep(r, z, now)
  local expired = redis.call('ZRANGEBYSCORE', z, '-inf', now, 'LIMIT', 0, ${SWEEP_BATCH})
  for _, old in ipairs(expired) do
    local rec = redis.call('HGET', r, old)
    if rec and string.sub(old, 1, 2) == 'L:' then
      -- A lease: rec is its counter, the amount it still holds is field id#.
      local amt = tonumber(redis.call('HGET', r, old .. '#') or '0')
      if amt > 0 and redis.call('HEXISTS', rec, 'spent') == 1 then redis.call('HINCRBY', rec, 'leased', -amt) end
      redis.call('HDEL', r, old, old .. '#')
    elseif rec then
      local amt = nil
      for part in string.gmatch(rec, '[^|]+') do
        if not amt then
          amt = tonumber(part)
        elseif redis.call('HEXISTS', part, 'spent') == 1 then
          redis.call('HINCRBY', part, 'reserved', -amt)
        end
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
    local spent = tonumber(v[1])
    local reserved = tonumber(v[2] or '0')
    local leased = tonumber(v[3] or '0')
    local limit = tonumber(A[4 + 2*(i-1) + 1])
    local hard = A[4 + 2*(i-1) + 2] == '1'
    if hard and spent + reserved + leased + amount > limit then
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
    out[#out+1] = redis.call('HINCRBY', K[2 + i], 'reserved', amount)
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
    amt = tonumber(string.match(rec, '^[^|]+'))
    redis.call('HDEL', K[1], id)
    redis.call('ZREM', K[2], id)
  end
  local out = {}
  for i = 3, #K do
    local h = K[i]
    if redis.call('HEXISTS', h, 'spent') == 1 then
      out[#out+1] = redis.call('HINCRBY', h, 'spent', actual)
      if amt then
        out[#out+1] = redis.call('HINCRBY', h, 'reserved', -amt)
      else
        out[#out+1] = tonumber(redis.call('HGET', h, 'reserved') or '0')
      end
      out[#out+1] = tonumber(redis.call('HGET', h, 'leased') or '0')
    else
      out[#out+1] = 0
      out[#out+1] = 0
      out[#out+1] = 0
    end
  end
  return out
end

-- Leases (R, Z: the organisation's records and deadlines; H: one counter; id: the lease, 'L:...').
-- A lease's record is R[id] = H and R[id#] = the amount it holds, so using it costs one HINCRBY.
-- Grants up to \`want\` more of H's allowance to lease id, and at most 1/div of what is left of a hard
-- budget, so edges leasing at once leave room for each other; nothing when that is under minGrant.
-- Returns {granted, spent, reserved, leased}, or {-1} when H has no counter (seed it first).
local function budget_lease(r, z, h, id, deadline, want, minGrant, limit, hard, div)
  local v = redis.call('HMGET', h, 'spent', 'reserved', 'leased')
  if not v[1] then return {-1} end
  local spent, reserved, leased = tonumber(v[1]), tonumber(v[2] or '0'), tonumber(v[3] or '0')
  local grant = want
  if hard then
    local room = math.floor((limit - spent - reserved - leased) / div)
    if room < grant then grant = room end
  end
  if grant < minGrant then return {0, spent, reserved, leased} end
  redis.call('HSET', r, id, h)
  redis.call('HINCRBY', r, id .. '#', grant)
  redis.call('ZADD', z, deadline, id)
  leased = redis.call('HINCRBY', h, 'leased', grant)
  return {grant, spent, reserved, leased}
end

-- Calls admitted under lease id cost \`actual\` in all: it moves from leased to spent (three HINCRBYs).
-- Returns {1, spent, leased}; {0, spent, leased} when the lease was swept (its edge was too slow
-- to renew it; the cost is still charged); {-1, 0, 0} when H was lost (it is not re-created here,
-- and the lease is dropped).
local function budget_lease_convert(r, h, id, actual)
  local left = redis.call('HINCRBY', r, id .. '#', -actual)
  if left < 0 then
    -- Swept: nothing of it is in leased any more.
    redis.call('HDEL', r, id .. '#')
    if redis.call('HEXISTS', h, 'spent') == 0 then return {-1, 0, 0} end
    return {0, redis.call('HINCRBY', h, 'spent', actual), tonumber(redis.call('HGET', h, 'leased') or '0')}
  end
  local leased = redis.call('HINCRBY', h, 'leased', -actual)
  if leased < 0 then
    -- The counter was lost (HINCRBY just made a new one) or rebuilt from the ledger without this lease.
    if redis.call('HEXISTS', h, 'spent') == 0 then
      redis.call('DEL', h)
    else
      redis.call('HINCRBY', h, 'leased', actual)
    end
    redis.call('HDEL', r, id, id .. '#')
    return {-1, 0, 0}
  end
  return {1, redis.call('HINCRBY', h, 'spent', actual), leased}
end

-- Gives \`amount\` of lease id back (all of it, and the record, when it holds no more); returns what went back.
local function budget_lease_release(r, z, h, id, amount)
  local held = tonumber(redis.call('HGET', r, id .. '#') or '-1')
  if held < 0 then return 0 end
  if amount >= held then
    amount = held
    redis.call('HDEL', r, id, id .. '#')
    redis.call('ZREM', z, id)
  else
    redis.call('HINCRBY', r, id .. '#', -amount)
  end
  if amount > 0 and redis.call('HEXISTS', h, 'spent') == 1 then redis.call('HINCRBY', h, 'leased', -amount) end
  return amount
end
`;

/** KEYS: H   ARGV: spent, ttlSeconds. Seeds a missing counter; a concurrent seed wins harmlessly. */
export const SEED_SCRIPT = `
if redis.call('HSETNX', KEYS[1], 'spent', ARGV[1]) == 1 then
  redis.call('HSETNX', KEYS[1], 'reserved', 0)
  if tonumber(ARGV[2]) > 0 then redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2])) end
  return 1
end
return 0
`;
