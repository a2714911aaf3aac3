-- Grants leases of one organisation: blocks of budget allowance, window calls and concurrency
-- slots an edge admits calls against without a round trip. Runs after rate-limit.lua and
-- budget.lua. Codec: LEASE_GRANT in admission-scripts.ts.
-- KEYS: R, Z, the budget counters, per window its current and previous counter, the concurrency
-- sets, the shard's epoch last.
-- ARGV: now, deadline, share divisor, #budgets, #windows, #sets, then per budget: lease id, want,
-- min grant, limit, hard; per window: limit, windowMs, windowStart, want, min grant; per set: max,
-- want, min grant, member prefix, first member number.
-- Returns per budget granted, spent, reserved, leased (strings; granted '-1': no counter), per
-- window and per set the grant; {-2} when the epoch is gone (Redis lost its data).
if redis.call('EXISTS', KEYS[#KEYS]) == 0 then return {-2} end
local now, deadline, div = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local nb, nw, ns = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local out = {}
local k, a = 3, 7
if nb > 0 then budget_sweep(KEYS[1], KEYS[2], now) end
for i = 1, nb do
  local r = budget_lease(KEYS[1], KEYS[2], KEYS[k], ARGV[a], deadline, tonumber(ARGV[a+1]), tonumber(ARGV[a+2]), tonumber(ARGV[a+3]), ARGV[a+4] == '1', div)
  out[#out+1] = r[1]
  out[#out+1] = r[2]
  out[#out+1] = r[3]
  out[#out+1] = r[4]
  k = k + 1
  a = a + 5
end
for i = 1, nw do
  out[#out+1] = rl_lease_window(KEYS[k], KEYS[k+1], now, tonumber(ARGV[a]), tonumber(ARGV[a+1]), tonumber(ARGV[a+2]), tonumber(ARGV[a+3]), tonumber(ARGV[a+4]), div)
  k = k + 2
  a = a + 5
end
for i = 1, ns do
  out[#out+1] = rl_lease_slots(KEYS[k], now, deadline, tonumber(ARGV[a]), tonumber(ARGV[a+1]), tonumber(ARGV[a+2]), div, ARGV[a+3], tonumber(ARGV[a+4]))
  k = k + 1
  a = a + 5
end
return out
