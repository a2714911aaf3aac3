import { BUDGET_LUA } from '@tollgate/budget';
import { RATE_LIMIT_LUA } from '@tollgate/rate-limit';

/**
 * The composed Lua of admission: the rate-limit and budget libraries' own functions, run together
 * so that a call is checked, counted and reserved (or settled) in one script.
 */

/**
 * KEYS: the deployment's epoch, the rate-limit keys, then the budget keys.  ARGV: #rate-limit keys,
 * #rate-limit args, the rate-limit args, then the budget args. Checks every rate limit and every
 * budget, and only if all pass counts the call and reserves its estimate: a refused call holds
 * nothing, anywhere. Returns {0, budget_apply's answer}, {1, rl_check's refusal}, {2, budget_check's
 * refusal or missing counter}, or {3} when the epoch is gone (Redis lost its data: counters are
 * being rebuilt, nothing is admitted).
 */
export const ADMIT_AND_RESERVE_SCRIPT = `${RATE_LIMIT_LUA}${BUDGET_LUA}
if redis.call('EXISTS', KEYS[1]) == 0 then return {3} end
local nrk, nra = tonumber(ARGV[1]), tonumber(ARGV[2])
local RK, RA, BK, BA = {}, {}, {}, {}
for i = 2, #KEYS do
  if i - 1 <= nrk then RK[#RK+1] = KEYS[i] else BK[#BK+1] = KEYS[i] end
end
for i = 3, #ARGV do
  if i <= 2 + nra then RA[#RA+1] = ARGV[i] else BA[#BA+1] = ARGV[i] end
end
if nrk > 0 then
  local refusal = rl_check(RK, RA)
  if refusal then return {1, refusal} end
end
local checked = {1}
if #BK > 0 then
  checked = budget_check(BK, BA)
  if checked[1] ~= 1 then return {2, checked} end
end
if nrk > 0 then rl_apply(RK, RA) end
if #BK > 0 then return {0, budget_apply(BK, BA, checked)} end
return {0, {1}}
`;

/**
 * A turn's completions, in one script: every call's settlement (or, under a lease, its cost
 * moving from leased to spent) and every usage event appended to the outbox, all or nothing.
 * KEYS: the edge's completion sequence, the usage outbox, the deployment's epoch, then per
 * settlement its budget keys (R, Z, H...) and concurrency sets; per conversion group R, H1..Hn.
 * ARGV: sequence number, #settlements, #conversion groups, #events, then per settlement: #budget
 * keys, #sets, call id, actual; per group: n, then per lease: id, amount; per event: field, value.
 * A sequence number Redis has already seen (a command resent after a reconnect) changes nothing
 * and answers {2}. Otherwise answers {1 (0 when the epoch is gone: Redis lost its data), then per
 * lease budget_lease_convert's 3 numbers}. Without the epoch everything is still written: the
 * events must reach the ledger, and a settlement only touches counters that exist (rebuilt ones).
 */
export const COMPLETE_SCRIPT = `${RATE_LIMIT_LUA}${BUDGET_LUA}
-- KEYS[1] is this edge's bitmap of scripts run (one bit per script); a script resent after a
-- reconnect finds its bit set. Exact, not a high-water mark: scripts may arrive out of order
-- (an EVALSHA answered NOSCRIPT is sent again as EVAL after later ones ran).
local bit = tonumber(ARGV[1])
if redis.call('GETBIT', KEYS[1], bit) == 1 then return {2} end
redis.call('SETBIT', KEYS[1], bit, 1)
redis.call('PEXPIRE', KEYS[1], 3600000)
local ns, ng, ne = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local k, a = 4, 5
local out = {redis.call('EXISTS', KEYS[3])}
for i = 1, ns do
  local nbk, nck = tonumber(ARGV[a]), tonumber(ARGV[a+1])
  local id, actual = ARGV[a+2], tonumber(ARGV[a+3])
  if nbk > 0 then
    local BK = {}
    for j = 0, nbk - 1 do BK[#BK+1] = KEYS[k+j] end
    budget_settle(BK, id, actual)
  end
  if nck > 0 then
    local CK = {}
    for j = 0, nck - 1 do CK[#CK+1] = KEYS[k+nbk+j] end
    rl_release(CK, id)
  end
  k = k + nbk + nck
  a = a + 4
end
for i = 1, ng do
  local n = tonumber(ARGV[a])
  for j = 1, n do
    local r = budget_lease_convert(KEYS[k], KEYS[k+j], ARGV[a+2*j-1], tonumber(ARGV[a+2*j]))
    out[#out+1] = r[1]
    out[#out+1] = r[2]
    out[#out+1] = r[3]
  end
  k = k + 1 + n
  a = a + 1 + 2*n
end
for i = 1, ne do
  redis.call('XADD', KEYS[2], '*', ARGV[a], ARGV[a+1])
  a = a + 2
end
return out
`;

/**
 * KEYS: R, Z, the budget counters, per window its current and previous counter, the concurrency sets.
 * ARGV: now, deadline, share divisor, #budgets, #windows, #sets, then per budget: lease id, want,
 * min grant, limit, hard; per window: limit, windowMs, windowStart, want, min grant; per set: max,
 * want, min grant, member prefix, first member number.
 * The deployment's epoch is the last key. Returns per budget {granted, spent, reserved, leased},
 * per window and per set the grant; {-2} when the epoch is gone (Redis lost its data).
 */
export const LEASE_GRANT_SCRIPT = `${RATE_LIMIT_LUA}${BUDGET_LUA}
if redis.call('EXISTS', KEYS[#KEYS]) == 0 then return {-2} end
local now, deadline, div = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local nb, nw, ns = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local out = {}
local k, a = 3, 7
if nb > 0 then budget_sweep(KEYS[1], KEYS[2], now) end
for i = 1, nb do
  local r = budget_lease(KEYS[1], KEYS[2], KEYS[k], ARGV[a], deadline, tonumber(ARGV[a+1]), tonumber(ARGV[a+2]), tonumber(ARGV[a+3]), ARGV[a+4] == '1', div)
  out[#out+1] = r[1]
  out[#out+1] = r[2] or 0
  out[#out+1] = r[3] or 0
  out[#out+1] = r[4] or 0
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
`;

/**
 * KEYS: R, Z, then the concurrency sets.  ARGV: now, deadline, #budget leases, their ids, then per
 * set: #members, the members. Moves each lease's deadline on; answers 1 per lease still whole, 0 per
 * lease Redis already swept (in part, for slots). The deployment's epoch is the last key: {-2} when
 * it is gone (Redis lost its data, and the leases with it).
 */
export const LEASE_RENEW_SCRIPT = `
if redis.call('EXISTS', KEYS[#KEYS]) == 0 then return {-2} end
local now, deadline, nb = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {}
for i = 1, nb do
  local id = ARGV[3 + i]
  if redis.call('HEXISTS', KEYS[1], id) == 1 then
    redis.call('ZADD', KEYS[2], deadline, id)
    out[#out+1] = 1
  else
    out[#out+1] = 0
  end
end
local a = 4 + nb
for k = 3, #KEYS - 1 do
  local n = tonumber(ARGV[a])
  local members, args = {}, {}
  for j = 1, n do
    members[j] = ARGV[a + j]
    args[#args+1] = deadline
    args[#args+1] = ARGV[a + j]
  end
  local present = 0
  for _, s in ipairs(redis.call('ZMSCORE', KEYS[k], unpack(members))) do
    if s then present = present + 1 end
  end
  redis.call('ZADD', KEYS[k], 'XX', unpack(args))
  redis.call('PEXPIRE', KEYS[k], math.max(deadline - now, 1000))
  out[#out+1] = present == n and 1 or 0
  a = a + 1 + n
end
return out
`;

/**
 * KEYS: R, Z, the budget counters, the window counters, the concurrency sets.
 * ARGV: #budgets, #windows, #sets, per budget: lease id, amount; per window: calls; per set: #members, the members.
 */
export const LEASE_RELEASE_SCRIPT = `${RATE_LIMIT_LUA}${BUDGET_LUA}
local nb, nw, ns = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local k, a = 3, 4
for i = 1, nb do
  budget_lease_release(KEYS[1], KEYS[2], KEYS[k], ARGV[a], tonumber(ARGV[a+1]))
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
return 1
`;
