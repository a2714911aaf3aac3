-- Claims the settlement of one task, in one round trip: the claim is taken only while nobody holds
-- it and the task is still open; a claim taken again (an earlier one lapsed: its edge died, or
-- marking the task settled failed) is counted, so its settlement knows it may be charged already.
-- KEYS[1]: the task's record (hash), KEYS[2]: its settlement claim (same slot).
-- ARGV: claim length (ms).
-- Returns -1: not claimed (held elsewhere, settled, expired or gone); 0: claimed; 1: claim retaken.
if not redis.call('SET', KEYS[2], '1', 'PX', tonumber(ARGV[1]), 'NX') then
  return -1
end
if redis.call('HGET', KEYS[1], 'state') ~= 'open' then
  redis.call('DEL', KEYS[2])
  return -1
end
if redis.call('HINCRBY', KEYS[1], 'claims', 1) > 1 then
  return 1
end
return 0
