-- Seeds a budget period's counter that is missing (a new period, or Redis lost it) with what the
-- ledger says was spent; a concurrent seed wins harmlessly.
-- KEYS: H   ARGV: spent, ttlSeconds (0: the counter never expires). Returns 1 (seeded) or 0 (there already).
if redis.call('HSETNX', KEYS[1], 'spent', ARGV[1]) == 1 then
  redis.call('HSETNX', KEYS[1], 'reserved', 0)
  if tonumber(ARGV[2]) > 0 then redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2])) end
  return 1
end
return 0
