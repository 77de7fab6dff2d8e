-- acquire: take the lock and hand out its fencing token, in one round trip.
--
-- KEYS[1]  the lock; its value is the holder's random token
-- KEYS[2]  the lock's fence counter (same {hash tag}, so same slot)
-- KEYS[3]  the token's cancel marker (see cancel.lua)
-- KEYS[4]  optional: the key's recorded result, looked for before this
--          script runs (acquire_record.lua)
-- KEYS[5]  optional: the key's queue of waiters (see release.lua)
-- KEYS[6]  with KEYS[5]: the line's sign, set whenever a waiter joins, for
--          as long as the line lives: release_lean.lua looks at the line
--          only when it is there
-- KEYS[7]  optional: the key's run mark (see mark_run.lua), to mark the
--          run as the lock is taken (store.AcquireMarker); sent with the
--          record asked for, and KEYS[5] and KEYS[6] unused unless ARGV[5]
--          names a waiter
-- ARGV[1]  the caller's random token
-- ARGV[2]  the lease, in milliseconds
-- ARGV[3]  the fence counter's lifetime, in milliseconds
-- ARGV[4]  the server's clock in microseconds as the caller reckons it
--          (see clock.go), or for RedlockStore the caller's own (see
--          below); '' or absent: the server's, asked with TIME
-- ARGV[5]  the waiter's id, when the caller waits in line; '' or absent: it
--          does not
-- ARGV[6]  with ARGV[5]: the queue's lifetime, in milliseconds
-- ARGV[7]  '1': look for the record in KEYS[4] first (acquire_record.lua);
--          sent by a waiter, whose KEYS[5] is its line, and with KEYS[7]
-- ARGV[8]  with KEYS[7]: how long the mark is kept, in milliseconds
-- ARGV[9]  with KEYS[7]: '1' to run again over another run's mark
--
-- Needs Redis 6.2 or later (SET ... GET).
--
-- Returns the fence when the lock is ours (a number below 2^53, a string
-- of digits above); with KEYS[7], in a three-element array: the fence, 0,
-- and 1 when the run before is in doubt, else 0 (as acquire_lean.lua
-- answers). When someone else holds it: minus the holder's
-- remaining lease in milliseconds (0: no expiry set); for a waiter
-- (ARGV[5]), that and the last fence handed out, in a two-element array.
-- When the record was asked for and is there, acquire_record.lua has
-- returned it already.
--
-- The fence arithmetic (less, succ, maxDigits, nextFence, fenceReply) is
-- fence.lua's, sent ahead of this script (after acquire_record.lua).

local clock = ARGV[4]
if clock == '' then
  clock = nil
end
local waiter = ARGV[5]
if waiter == '' then
  waiter = nil
end
if clock and (#clock > maxDigits or not clock:match('^[1-9]%d*$')) then
  return redis.error_reply('ERR reqlock: fence clock must be 1 to 19 digits')
end

local ours = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])

if ours then
  -- The caller gave up on this very attempt and cleaned up before it landed
  -- (a delayed command): nobody is waiting for this lock.
  if redis.call('EXISTS', KEYS[3]) == 1 then
    redis.call('DEL', KEYS[1])
    return redis.error_reply('ERR reqlock: acquire landed after it was cancelled')
  end
else
  local holder = redis.call('GET', KEYS[1])
  if holder == ARGV[1] then
    -- A client that lost the reply to its first attempt and sent it again
    -- finds its own token: the lock is already ours. So does a waiter
    -- whose attempts carry its name ('~' .. waiter, as Locker does on
    -- Redis) when a release handed the lock to it (release.lua), unless it
    -- gave up and cleaned up since: then the hand-off runs out. The lease
    -- only grows: the holder may have extended it since, and trusts that.
    if redis.call('EXISTS', KEYS[3]) == 1 then
      return redis.error_reply('ERR reqlock: acquire landed after it was cancelled')
    end
    if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
      redis.call('PEXPIRE', KEYS[1], ARGV[2])
    end
    ours = true
  elseif waiter and holder == '~' .. waiter then
    -- Handed to us by a release: our turn, unless this attempt was given
    -- up and cleaned up before it landed; then the hand-off runs out.
    if redis.call('EXISTS', KEYS[3]) == 1 then
      return redis.error_reply('ERR reqlock: acquire landed after it was cancelled')
    end
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    ours = true
  end
end

if ours then
  if waiter then
    -- A waiter that found the lock free may still stand in line.
    redis.call('LREM', KEYS[5], 1, waiter)
  end
  -- The clock is the server's, or for RedlockStore the caller's (ARGV[4]):
  -- its fence is the largest of several servers', and only one clock makes
  -- those comparable.
  local fence = nextFence(KEYS[2], clock, ARGV[3])
  if not fence then
    redis.call('DEL', KEYS[1])
    return redis.error_reply('ERR reqlock: fence counter exhausted')
  end
  -- Asked to mark the run: as acquire_lean.lua does. A copy of this
  -- attempt that got here first set our own mark, which is no doubt.
  if KEYS[7] then
    local doubt = 0
    if not redis.call('SET', KEYS[7], ARGV[1], 'NX', 'PX', ARGV[8]) then
      if redis.call('GET', KEYS[7]) ~= ARGV[1] then
        doubt = 1
      end
      if doubt == 0 or ARGV[9] == '1' then
        redis.call('PEXPIRE', KEYS[7], ARGV[8])
      end
    end
    return { fenceReply(fence), 0, doubt }
  end
  return fenceReply(fence)
end

-- A waiter joins the line, once, unless this attempt was given up and
-- cleaned up before it landed: a waiter that left must not stand in line.
if waiter and redis.call('EXISTS', KEYS[3]) == 0 then
  if not redis.call('LPOS', KEYS[5], waiter) then
    redis.call('RPUSH', KEYS[5], waiter)
  end
  redis.call('PEXPIRE', KEYS[5], ARGV[6])
  redis.call('SET', KEYS[6], '1', 'PX', ARGV[6])
end

local pttl = redis.call('PTTL', KEYS[1])
if pttl < 0 then
  pttl = 0
end
if waiter then
  -- A waiter also learns the last fence handed out, '' if none: a hand-off
  -- that a release makes to it after this carries a larger one (see
  -- release.lua), and one made before, a smaller or equal one.
  return { -pttl, redis.call('GET', KEYS[2]) or '' }
end
return -pttl
