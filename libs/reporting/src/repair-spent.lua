-- Sets a counter's `spent` to the value reconciliation computed, only if `spent` is still what it
-- read: a settlement in between means the computation is stale, and nothing is lost. `reserved`
-- and `leased` (calls in flight, edges' leases) are left to repair-held.lua.
-- Codec: REPAIR_SPENT in budget-reconcile-scripts.ts.
-- KEYS: the counter   ARGV: spent as read, new spent. Returns 1 (set), 0 (moved), -1 (gone).
local s = redis.call('HGET', KEYS[1], 'spent')
if not s then return -1 end
if s ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'spent', ARGV[2])
return 1
