-- Gives back what one organisation's leases hold unused. Runs after rate-limit.lua and budget.lua.
-- Codec: LEASE_RELEASE in admission-scripts.ts.
-- KEYS: R, Z, the budget counters, the window counters, the concurrency sets.
-- ARGV: #budgets, #windows, #sets, per budget: lease id, amount; per window: calls; per set:
-- #members, the members. Answers per budget lease what went back (a string).
local nb, nw, ns = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local k, a = 3, 4
local out = {}
for i = 1, nb do
  out[#out+1] = budget_fmt(budget_lease_release(KEYS[1], KEYS[2], KEYS[k], ARGV[a], tonumber(ARGV[a+1])))
  k = k + 1
  a = a + 2
end
for i = 1, nw do
  rl_lease_window_release(KEYS[k], tonumber(ARGV[a]))
  k = k + 1
  a = a + 1
end
for i = 1, ns do
  local n = tonumber(ARGV[a])
  local members = {}
  for j = 1, n do members[j] = ARGV[a + j] end
  if n > 0 then redis.call('ZREM', KEYS[k], unpack(members)) end
  k = k + 1
  a = a + 1 + n
end
return out
