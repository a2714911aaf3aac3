-- Pushes an admitted call's deadline out, once its upstream made it a task: its reservation and
-- concurrency slots are then swept at ARGV[2] at the earliest, not at the call's own deadline.
-- Codec: EXTEND_HOLD in admission-scripts.ts.
-- KEYS: R and Z (the organisation's reservation records and deadlines) when ARGV[4] is '1', then
-- the call's concurrency sets. ARGV: call id, deadline (ms), now (ms), has a reservation (1/0).
-- Answers 1, or 0 when the reservation is gone (swept already: the call's edge was too slow), in
-- which case nothing is written.
local id, deadline, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local first = 1
if ARGV[4] == '1' then
  if redis.call('HEXISTS', KEYS[1], id) == 0 then return 0 end
  redis.call('ZADD', KEYS[2], 'XX', 'GT', deadline, id)
  first = 3
end
for i = first, #KEYS do
  -- XX: a slot already freed is not taken again. The set lives at least until the slot's deadline.
  if redis.call('ZADD', KEYS[i], 'XX', 'GT', 'CH', deadline, id) == 1 then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl >= 0 and ttl < deadline - now then redis.call('PEXPIRE', KEYS[i], deadline - now) end
  end
end
return 1
