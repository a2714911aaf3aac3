-- Releases a lock only if this holder still has it (it may have expired and been taken by another
-- replica). Codec: RELEASE_LOCK in connection-scripts.ts.
-- KEYS: the lock   ARGV: the holder's token. Returns 1 (released) or 0 (not ours any more).
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
