-- release: give the lock up only if it still holds our token, and hand it to
-- the next waiter in line, in one round trip.
--
-- KEYS[1]  the lock
-- KEYS[2]  the key's line of waiters (see acquire.lua)
-- KEYS[3]  the lock's fence counter (see fence.lua)
-- KEYS[4]  the token's cancel marker (see acquire.lua); set only with
--          ARGV[3] (without it, with KEYS[5], KEYS[5] stands in)
-- KEYS[5]  optional: the key's run mark (see mark_run.lua), dropped when
--          it is the token's own: sent by a cancel or a waiter's leave,
--          whose acquire may have marked a run that never started
-- ARGV[1]  the holder's token; or '~' .. a waiter, to pass on a hand-off
--          that waiter will not claim
-- ARGV[2]  how long a hand-off waits to be claimed, in milliseconds
-- ARGV[3]  how long to keep the cancel marker, in milliseconds; '': none
-- ARGV[4]  '1': tell everyone in line and hand the lock to nobody
--          (RedlockStore: a hand-off split over its nodes would reach no
--          quorum)
-- ARGV[5]  a waiter to take out of the line first; '': none
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
-- The next waiter is the line's head: the lock is handed to it, under the
-- value '~' .. waiter (which no token equals) for ARGV[2] ms, with the next
-- fence, and it alone is told, so waiters on all instances are served in
-- the order they joined, one at a time. A head that died or gave up holds
-- the key up for ARGV[2] ms at most.
--
-- The head may run at once on what it is told, without a round trip: its
-- last attempt, sent at s, was refused and learned the last fence then
-- (acquire.lua). A larger fence here means this hand-off came after that
-- attempt, so after s, and its ARGV[2] ms run past s + ARGV[2]. A message
-- that comes late, for a hand-off that ran out before that attempt, carries
-- a fence no larger, and the waiter asks instead. A waiter that comes too
-- late to rely on the ARGV[2] ms claims the hand-off with an acquire
-- (acquire.lua), as one told without a fence does. It renews its lease to
-- a whole one either way.
--
-- The fence counter keeps the lifetime it had, at least a minute: the
-- waiter's renewal stretches it to its own lease's (extend.lua).
--
-- A waiter is '<instance>/<wait>': each instance (a Locker) listens on one
-- channel, the key's prefix .. 'wake:' .. instance, for all of its keys, and
-- is told the key, the waiter and the fence, space-separated, or the key
-- and the waiter alone when the lock is not handed to it.

local prefix = string.match(KEYS[1], '^[^{]*')
local function tell(waiter, fence)
  local instance = string.match(waiter, '^[^/]*')
  local msg = KEYS[1] .. ' ' .. waiter
  if fence then
    msg = msg .. ' ' .. fence
  end
  redis.call('PUBLISH', prefix .. 'wake:' .. instance, msg)
end

if ARGV[3] ~= '' then
  redis.call('SET', KEYS[4], '1', 'PX', ARGV[3])
end
if KEYS[5] and redis.call('GET', KEYS[5]) == ARGV[1] then
  redis.call('DEL', KEYS[5])
end
if ARGV[5] ~= '' then
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
  local lifetime = math.max(redis.call('PTTL', KEYS[3]), 60000)
  -- nil when the counter is exhausted: then the head claims the hand-off,
  -- and its acquire says so.
  tell(head, nextFence(KEYS[3], nil, lifetime))
else
  redis.call('DEL', KEYS[1])
end
return 1
