-- ttl: the remaining lease of a lock we hold, in one round trip.
--
-- KEYS[1]  the lock
-- ARGV[1]  the holder's token
--
-- Returns the remaining lease in milliseconds, or -1 when the lock is not ours.

if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PTTL', KEYS[1])
end
return -1
