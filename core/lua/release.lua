-- release: give the lock up only if it still holds our token, and hand it to
-- the next waiter in line, in one round trip.
--
-- KEYS[1]  the lock
-- KEYS[2]  the key's line of waiters (see acquire.lua)
-- KEYS[3]  the token's cancel marker (see acquire.lua); only with ARGV[3]
-- ARGV[1]  the holder's token; or '~' .. a waiter, to pass on a hand-off
--          that waiter will not claim
-- ARGV[2]  how long a hand-off waits to be claimed, in milliseconds
-- ARGV[3]  how long to keep the cancel marker, in milliseconds; '': none
-- ARGV[4]  '1': tell everyone in line and hand the lock to nobody
--          (RedlockStore: a hand-off split over its nodes would reach no
--          quorum)
-- ARGV[5]  optional: a waiter to take out of the line first
--
-- Returns 1 when the lock (or the hand-off) was ours and is passed on or
-- gone, 0 when it was not ours: it expired, or someone else holds it now,
-- and that holder keeps it.
--
-- The cancel marker (ARGV[3]) undoes an acquire whose outcome is unknown,
-- now and if it lands later: a command that timed out may still be on its
-- way, and would take the lock for nobody, for a whole lease. acquire.lua
-- gives the lock straight back when it finds the marker of its token. It is
-- set whether or not the lock is ours: the acquire may not have landed yet.
--
-- The next waiter is the line's head: the lock is left reserved for it
-- ('~' .. waiter) for ARGV[2] ms and it alone is told, so waiters on all
-- instances are served in the order they joined, one at a time. A head that
-- died or gave up holds the key up for ARGV[2] ms at most.
--
-- A waiter is '<instance>/<wait>': each instance (a Locker) listens on one
-- channel, the key's prefix .. 'wake:' .. instance, for all of its keys, and
-- is told the key and the waiter.

local prefix = string.match(KEYS[1], '^[^{]*')
local function tell(waiter)
  local instance = string.match(waiter, '^[^/]*')
  redis.call('PUBLISH', prefix .. 'wake:' .. instance, KEYS[1] .. ' ' .. waiter)
end

if ARGV[3] ~= '' then
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[3])
end
if ARGV[5] then
  redis.call('LREM', KEYS[2], 1, ARGV[5])
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[4] == '1' then
  redis.call('DEL', KEYS[1])
  local all = redis.call('LRANGE', KEYS[2], 0, -1)
  if #all > 0 then
    redis.call('DEL', KEYS[2])
    for _, waiter in ipairs(all) do
      tell(waiter)
    end
  end
  return 1
end
local head = redis.call('LPOP', KEYS[2])
if head then
  redis.call('SET', KEYS[1], '~' .. head, 'PX', ARGV[2])
  tell(head)
else
  redis.call('DEL', KEYS[1])
end
return 1
