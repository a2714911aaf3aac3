-- Drops a budget counter that holds a field that is not an integer (budget_fields_ok, budget.lua),
-- so that it is seeded again from the ledger; a counter repaired meanwhile is left alone.
-- KEYS: H. Returns the fields it dropped {spent, reserved, leased} ('' where absent), or {} when
-- the counter is missing or readable.
local v = redis.call('HMGET', KEYS[1], 'spent', 'reserved', 'leased')
if not v[1] and not v[2] and not v[3] then return {} end
if budget_fields_ok(v) then return {} end
redis.call('DEL', KEYS[1])
return {v[1] or '', v[2] or '', v[3] or ''}
