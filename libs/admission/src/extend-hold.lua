-- Pushes an admitted call's deadline out: while its edge lives (HoldRenewal, every TTL/3), or once
-- its upstream made it a task (its reservation and concurrency slots are then swept at ARGV[2] at
-- the earliest, not at the call's own deadline). Codec: EXTEND_HOLD in admission-scripts.ts.
-- KEYS: R and Z (the organisation's reservation records and deadlines) when ARGV[4] is '1', then
-- the call's concurrency sets. ARGV: call id, deadline (ms), now (ms), has a reservation (1/0).
-- All or nothing: answers 1 once every part of the hold is renewed, or 0, having written nothing,
-- when any part is gone (its reservation record, or its member of any of its sets: swept past its
-- deadline, settled, or lost with Redis' data). A hold with a part gone has lapsed: what is left of
-- it is past its deadline too, and goes with the next sweep.
local id, deadline, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local first = 1
if ARGV[4] == '1' then
  if redis.call('HEXISTS', KEYS[1], id) == 0 then return 0 end
  first = 3
end
for i = first, #KEYS do
  if not redis.call('ZSCORE', KEYS[i], id) then return 0 end
end
if first == 3 then redis.call('ZADD', KEYS[2], 'XX', 'GT', deadline, id) end
for i = first, #KEYS do
  -- GT: a later deadline (a task's) is kept. The set lives at least until the slot's deadline.
  if redis.call('ZADD', KEYS[i], 'XX', 'GT', 'CH', deadline, id) == 1 then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl >= 0 and ttl < deadline - now then redis.call('PEXPIRE', KEYS[i], deadline - now) end
  end
end
return 1
