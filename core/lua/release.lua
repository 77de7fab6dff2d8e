-- release: delete the lock only if it still holds our token, in one round trip.
--
-- KEYS[1]  the lock
-- ARGV[1]  the holder's token
--
-- Returns 1 when the lock was ours and is gone, 0 when it was not ours (it
-- expired, or someone else holds it now, and that holder keeps it).
-- The fence counter is left alone: it must outlive the lock.

if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
