-- extend: renew the lease only if the lock still holds our token, in one round trip.
--
-- KEYS[1]  the lock
-- KEYS[2]  the lock's fence counter
-- ARGV[1]  the holder's token
-- ARGV[2]  the new lease, in milliseconds
-- ARGV[3]  how long the fence counter outlives the lease, in milliseconds
--
-- Returns 1 when renewed, 0 when the lock is no longer ours.

if redis.call('GET', KEYS[1]) == ARGV[1] then
  -- Keep the counter alive at least as long as the lock it fences.
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
