-- extend: renew the lease only if the lock still holds our token, in one round trip.
--
-- KEYS[1]  the lock
-- KEYS[2]  the lock's fence counter
-- ARGV[1]  the holder's token
-- ARGV[2]  the new lease, in milliseconds
-- ARGV[3]  how long the fence counter outlives the lease, in milliseconds
--
-- Returns 1 when the lock is ours and its lease runs at least ARGV[2] from
-- now, 0 when the lock is no longer ours.
--
-- The lease only ever grows. An extend whose reply was lost may still be on
-- its way and land after a later one succeeded; had it set the lease, it
-- could cut short the lease its holder trusts since. So each extend leaves
-- the expiry at the later of what it was and now + ARGV[2]. (PEXPIRE ... GT
-- says the same, but needs Redis 7.)

if redis.call('GET', KEYS[1]) == ARGV[1] then
  -- Keep the counter alive at least as long as the lock it fences.
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
  return 1
end
return 0
