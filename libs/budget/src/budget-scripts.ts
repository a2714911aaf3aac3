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
 * budget_check returns {1, spent1, reserved1, ...} (the standings before this reservation),
 *   {0, index, spent, reserved} when budget `index` (1-based) is hard and short,
 *   {-1, index} when budget `index` has no counter yet (the caller seeds it from the ledger);
 * budget_apply then reserves and returns {1, spent1, reserved1, spent2, reserved2, ...};
 * budget_settle(K, id, actual) returns {spent1, reserved1, ...}.
 */

/** At most this many expired reservations are swept per reservation, so no call pays for a backlog at once. */
const SWEEP_BATCH = 100;

export const BUDGET_LUA = `
-- Sweeps reservations whose edge never settled them. A counter that has expired or was lost is
-- left alone (decrementing it would create a counter without its ledger history).
local function budget_sweep(r, z, now)
  local expired = redis.call('ZRANGEBYSCORE', z, '-inf', now, 'LIMIT', 0, ${SWEEP_BATCH})
  for _, old in ipairs(expired) do
    local rec = redis.call('HGET', r, old)
    if rec then
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
    local v = redis.call('HMGET', K[2 + i], 'spent', 'reserved')
    if not v[1] then return {-1, i} end
    local spent = tonumber(v[1])
    local reserved = tonumber(v[2] or '0')
    local limit = tonumber(A[4 + 2*(i-1) + 1])
    local hard = A[4 + 2*(i-1) + 2] == '1'
    if hard and spent + reserved + amount > limit then
      return {0, i, spent, reserved}
    end
    out[#out+1] = spent
    out[#out+1] = reserved
  end
  return out
end

-- checked: budget_check's {1, spent1, reserved1, ...}
local function budget_apply(K, A, checked)
  local id = A[2]
  local deadline = tonumber(A[3])
  local amount = tonumber(A[4])
  local out = {1}
  local rec = {tostring(amount)}
  for i = 1, #K - 2 do
    out[#out+1] = checked[2*i]
    out[#out+1] = redis.call('HINCRBY', K[2 + i], 'reserved', amount)
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
    else
      out[#out+1] = 0
      out[#out+1] = 0
    end
  end
  return out
end
`;

/** KEYS and ARGV as K and A (reserve) above. Returns budget_apply's or budget_check's answer. */
export const RESERVE_SCRIPT = `${BUDGET_LUA}
local checked = budget_check(KEYS, ARGV)
if checked[1] ~= 1 then return checked end
return budget_apply(KEYS, ARGV, checked)
`;

/** KEYS: R, Z, H1, ...   ARGV: reservationId, actual. Returns budget_settle's answer. */
export const SETTLE_SCRIPT = `${BUDGET_LUA}
return budget_settle(KEYS, ARGV[1], tonumber(ARGV[2]))
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
