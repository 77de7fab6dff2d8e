-- cancel: undo an acquire whose outcome is unknown, now and if it lands
-- later, in one round trip.
--
-- KEYS[1]  the lock
-- KEYS[2]  the token's cancel marker, which acquire.lua checks
-- ARGV[1]  the token of the acquire to undo
-- ARGV[2]  how long the marker lasts, in milliseconds
--
-- An acquire that timed out may still be on its way: a plain release would
-- find nothing, and the acquire would then take the lock for nobody, for a
-- whole lease. The marker makes it give the lock straight back when it lands.
--
-- Returns 1 when the acquire had landed and its lock is now deleted, 0
-- otherwise.

redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
