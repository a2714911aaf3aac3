/**
 * Lua scripts that reserve and settle spend against every budget of a call at once.
 *
 * Each budget period has one counter hash H (`spent`, `reserved`), created by SEED_SCRIPT with the
 * period's expiry. An organisation's reservations in flight are kept once per call, not once per
 * budget: a hash R (reservation id -> "amount|H1|H2|...") and a sorted set Z of reservation ids
 * scored by deadline. A reservation whose edge died is swept when its deadline passes, by the next
 * reservation in the organisation; no extra process is needed.
 * All keys carry the organisation's hash tag, so the scripts run on Redis Cluster (a sweep touches
 * counters of the same organisation, hence the same slot).
 */

/** At most this many expired reservations are swept per reservation, so no call pays for a backlog at once. */
const SWEEP_BATCH = 100;

/**
 * KEYS: R, Z, H1, H2, ...
 * ARGV: now, reservationId, deadline, amount, then per budget: limit, hard (1/0)
 * Returns {1, spent1, reserved1, spent2, reserved2, ...} after reserving,
 *         {0, index, spent, reserved} when budget `index` (1-based) is hard and short,
 *         {-1, index} when budget `index` has no counter yet (the caller seeds it from the ledger).
 */
export const RESERVE_SCRIPT = `
local r, z = KEYS[1], KEYS[2]
local now = tonumber(ARGV[1])
local id = ARGV[2]
local deadline = tonumber(ARGV[3])
local amount = tonumber(ARGV[4])
local n = #KEYS - 2

-- Sweep reservations whose edge never settled them. A counter that has expired or was lost is
-- left alone (decrementing it would create a counter without its ledger history).
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

local spent = {}
local reserved = {}
for i = 1, n do
  local v = redis.call('HMGET', KEYS[2 + i], 'spent', 'reserved')
  if not v[1] then return {-1, i} end
  spent[i] = tonumber(v[1])
  reserved[i] = tonumber(v[2] or '0')
  local limit = tonumber(ARGV[4 + 2*(i-1) + 1])
  local hard = ARGV[4 + 2*(i-1) + 2] == '1'
  if hard and spent[i] + reserved[i] + amount > limit then
    return {0, i, spent[i], reserved[i]}
  end
end

local out = {1}
local rec = {tostring(amount)}
for i = 1, n do
  out[#out+1] = spent[i]
  out[#out+1] = redis.call('HINCRBY', KEYS[2 + i], 'reserved', amount)
  rec[#rec+1] = KEYS[2 + i]
end
redis.call('HSET', r, id, table.concat(rec, '|'))
redis.call('ZADD', z, deadline, id)
return out
`;

/**
 * KEYS: R, Z, H1, H2, ...   ARGV: reservationId, actual
 * Drops the reservation (if the sweeper has not already) and adds the actual cost to `spent`,
 * even for a swept reservation: the ledger will hold the call, so the counter must too. A counter
 * that no longer exists is not created here: the next reservation seeds it from the ledger.
 * Returns {spent1, reserved1, spent2, reserved2, ...}.
 */
export const SETTLE_SCRIPT = `
local r, z = KEYS[1], KEYS[2]
local id = ARGV[1]
local actual = tonumber(ARGV[2])
local rec = redis.call('HGET', r, id)
local amt = 0
if rec then
  amt = tonumber(string.match(rec, '^[^|]+'))
  redis.call('HDEL', r, id)
  redis.call('ZREM', z, id)
end
local out = {}
for i = 3, #KEYS do
  local h = KEYS[i]
  if redis.call('HEXISTS', h, 'spent') == 1 then
    local reserved
    if amt ~= 0 then
      reserved = redis.call('HINCRBY', h, 'reserved', -amt)
    else
      reserved = tonumber(redis.call('HGET', h, 'reserved') or '0')
    end
    out[#out+1] = redis.call('HINCRBY', h, 'spent', actual)
    out[#out+1] = reserved
  else
    out[#out+1] = 0
    out[#out+1] = 0
  end
end
return out
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
