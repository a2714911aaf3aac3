-- Claims the tasks whose expiry is due, at most ARGV[3] of them: each is pushed back to ARGV[2]
-- (the claim's end), so one edge handles it while the others skip it; an edge that dies while
-- handling one leaves it to be claimed again then.
-- KEYS[1]: the expiry index (members `<orgId>|<taskId>`, scored by expiry ms).
-- ARGV: now (ms), claimed until (ms), limit.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[2], member)
end
return due
