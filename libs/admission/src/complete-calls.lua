-- A turn's completions of one organisation, in one script: every call's settlement (or, under a
-- lease, its cost moving from leased to spent) and every usage event appended to the outbox.
-- Runs after rate-limit.lua and budget.lua. Codec: COMPLETE_CALLS in admission-scripts.ts.
-- KEYS: the edge's completion bitmap, the usage outbox, the shard's epoch, then per settlement its
-- budget keys (R, Z, H...) and concurrency sets; per lease group R, H1..Hn.
-- ARGV: bit, #settlements, #lease groups, #events, then per settlement: #budget keys, #sets, call
-- id, actual; per group: n, then per lease: id, amount; per event: field, value.
-- A bit Redis has already seen (a script resent after a reconnect) changes nothing and answers
-- {2}. Otherwise answers {1 (0 when the epoch is gone: Redis lost its data), then per lease
-- budget_lease_convert's status, spent, leased}. Without the epoch everything is still written:
-- the events must reach the ledger, and a settlement only touches counters that exist.
-- KEYS[1] is this edge's bitmap of scripts run (one bit per script); a script resent after a
-- reconnect finds its bit set. Exact, not a high-water mark: scripts may arrive out of order
-- (an EVALSHA answered NOSCRIPT is sent again as EVAL after later ones ran).
local bit = tonumber(ARGV[1])
-- Everything is checked before the first write: the script refuses having written nothing, or
-- completes (a Lua error does not undo the writes before it).
local function refuse(why) return redis.error_reply('TG_COMPLETION_REFUSED ' .. why) end
local function typed(key, want)
  local t = redis.call('TYPE', key)['ok']
  return t == 'none' or t == want
end
if not typed(KEYS[1], 'string') then return refuse('bitmap ' .. KEYS[1]) end
if ARGV[4] ~= '0' and not typed(KEYS[2], 'stream') then return refuse('outbox ' .. KEYS[2]) end
do
  local ns, ng = tonumber(ARGV[2]), tonumber(ARGV[3])
  local k, a = 4, 5
  for i = 1, ns do
    local nbk, nck = tonumber(ARGV[a]), tonumber(ARGV[a+1])
    if not budget_amount(ARGV[a+3]) then return refuse('amount of ' .. ARGV[a+2]) end
    if nbk > 0 and not (typed(KEYS[k], 'hash') and typed(KEYS[k+1], 'zset')) then return refuse('records ' .. KEYS[k]) end
    for j = 2, nbk - 1 do
      if not budget_counter_ok(KEYS[k], KEYS[k+j]) then return refuse('counter ' .. KEYS[k+j]) end
    end
    for j = nbk, nbk + nck - 1 do
      if not typed(KEYS[k+j], 'zset') then return refuse('slots ' .. KEYS[k+j]) end
    end
    k = k + nbk + nck
    a = a + 4
  end
  for i = 1, ng do
    local n = tonumber(ARGV[a])
    if not typed(KEYS[k], 'hash') then return refuse('records ' .. KEYS[k]) end
    for j = 1, n do
      if not budget_counter_ok(KEYS[k], KEYS[k+j]) then return refuse('counter ' .. KEYS[k+j]) end
      if not budget_amount(ARGV[a+2*j]) then return refuse('amount of ' .. ARGV[a+2*j-1]) end
    end
    k = k + 1 + n
    a = a + 1 + 2*n
  end
end
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
