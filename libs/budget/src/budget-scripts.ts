/**
 * Lua scripts that reserve and settle spend against every budget of a call at once. Each budget
 * period has two keys: a hash H (`spent`, `reserved`, and `r:<reservationId>` = amount) and a
 * sorted set Z of reservation ids scored by deadline. A reservation whose edge died is swept when
 * its deadline passes, by the next reservation that touches the budget; no extra process needed.
 * All keys of one call carry the org hash tag, so the scripts run on Redis Cluster.
 */

/** Removes expired reservations from H/Z; shared by both scripts. */
const SWEEP = `
local function sweep(h, z, now)
  local expired = redis.call('ZRANGEBYSCORE', z, '-inf', now)
  for _, id in ipairs(expired) do
    local amt = redis.call('HGET', h, 'r:' .. id)
    if amt then
      redis.call('HINCRBY', h, 'reserved', -tonumber(amt))
      redis.call('HDEL', h, 'r:' .. id)
    end
    redis.call('ZREM', z, id)
  end
end
`;

/**
 * KEYS: H1, Z1, H2, Z2, ...
 * ARGV: now, reservationId, deadline, amount, then per budget: limit, hard (1/0), ttlSeconds (0 = none)
 * Returns {1, spent1, reserved1, spent2, reserved2, ...} after reserving,
 *         {0, index, spent, reserved} when budget `index` (1-based) is hard and short,
 *         {-1, index} when budget `index` has no counter yet (the caller seeds it from the ledger).
 */
export const RESERVE_SCRIPT = `${SWEEP}
local now = tonumber(ARGV[1])
local id = ARGV[2]
local deadline = tonumber(ARGV[3])
local amount = tonumber(ARGV[4])
local n = #KEYS / 2
for i = 1, n do
  if redis.call('EXISTS', KEYS[2*i-1]) == 0 then return {-1, i} end
end
for i = 1, n do
  local h, z = KEYS[2*i-1], KEYS[2*i]
  sweep(h, z, now)
  local limit = tonumber(ARGV[4 + 3*(i-1) + 1])
  local hard = ARGV[4 + 3*(i-1) + 2] == '1'
  local spent = tonumber(redis.call('HGET', h, 'spent') or '0')
  local reserved = tonumber(redis.call('HGET', h, 'reserved') or '0')
  if hard and spent + reserved + amount > limit then
    return {0, i, spent, reserved}
  end
end
local out = {1}
for i = 1, n do
  local h, z = KEYS[2*i-1], KEYS[2*i]
  local ttl = tonumber(ARGV[4 + 3*(i-1) + 3])
  local reserved = redis.call('HINCRBY', h, 'reserved', amount)
  redis.call('HSET', h, 'r:' .. id, amount)
  redis.call('ZADD', z, deadline, id)
  if ttl > 0 then
    redis.call('EXPIRE', h, ttl)
    redis.call('EXPIRE', z, ttl)
  end
  out[#out+1] = tonumber(redis.call('HGET', h, 'spent') or '0')
  out[#out+1] = reserved
end
return out
`;

/**
 * KEYS: H1, Z1, ...   ARGV: reservationId, actual
 * Drops the reservation (if the sweeper has not already) and adds the actual cost to `spent`,
 * even for a swept reservation: the ledger will hold the call, so the counter must too.
 * Returns {spent1, reserved1, spent2, reserved2, ...}.
 */
export const SETTLE_SCRIPT = `
local id = ARGV[1]
local actual = tonumber(ARGV[2])
local out = {}
for i = 1, #KEYS / 2 do
  local h, z = KEYS[2*i-1], KEYS[2*i]
  local amt = redis.call('HGET', h, 'r:' .. id)
  if amt then
    redis.call('HINCRBY', h, 'reserved', -tonumber(amt))
    redis.call('HDEL', h, 'r:' .. id)
  end
  redis.call('ZREM', z, id)
  local spent = redis.call('HINCRBY', h, 'spent', actual)
  out[#out+1] = spent
  out[#out+1] = tonumber(redis.call('HGET', h, 'reserved') or '0')
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
