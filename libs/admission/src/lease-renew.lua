-- Moves the deadlines of one organisation's leases on. Codec: LEASE_RENEW in admission-scripts.ts.
-- KEYS: R, Z, the concurrency sets, the shard's epoch last.
-- ARGV: now, deadline, #budget leases, their ids, then per set: #members, the members.
-- Answers 1 per lease still whole, 0 per lease Redis already swept (in part, for slots); {-2}
-- when the epoch is gone (Redis lost its data, and the leases with it).
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
  -- The set's TTL only rises: it may hold a slot kept longer than the lease's (a task's).
  local keep = math.max(deadline - now, 1000)
  if redis.call('PTTL', KEYS[k]) < keep then redis.call('PEXPIRE', KEYS[k], keep) end
  out[#out+1] = present == n and 1 or 0
  a = a + 1 + n
end
return out
