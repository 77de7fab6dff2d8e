-- permit_leave: take a waiter out of a key's line, and wake the waiter
-- that is now at its head, in one round trip: a place the leaver would
-- have been given goes on at once.
--
-- KEYS[1]  the line (see permit_acquire.lua)
-- KEYS[2]  the line's liveness
-- ARGV[1]  the waiter
-- ARGV[2]  the Locker's key, for the wake-up

if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('ZREM', KEYS[2], ARGV[1])
local head = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
if head then
  local prefix = string.match(ARGV[2], '^[^{]*')
  redis.call('PUBLISH', prefix .. 'wake:' .. string.match(head, '^[^/]*'), ARGV[2] .. ' ' .. head)
end
return 1
