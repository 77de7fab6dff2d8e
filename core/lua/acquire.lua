-- acquire: take the lock and hand out its fencing token, in one round trip.
--
-- KEYS[1]  the lock; its value is the holder's random token
-- KEYS[2]  the lock's fence counter (same {hash tag}, so same slot)
-- ARGV[1]  the caller's random token
-- ARGV[2]  the lease, in milliseconds
-- ARGV[3]  the fence counter's lifetime, in milliseconds
-- ARGV[4]  optional: a floor for the fence, the caller's clock in
--          microseconds (RedlockStore, see below; needs Redis 6.2 for SET GET)
--
-- Returns the fence (> 0) when the lock is ours, or when someone else holds
-- it, minus the holder's remaining lease in milliseconds (0: no expiry set).
--
-- The common case is two calls, SET NX and INCR: every redis.call costs about
-- a microsecond of server time, and this script is the hot path.

local ours = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])

-- A client that lost the reply to its first attempt and sent it again finds
-- its own token: the lock is already ours, so say so instead of "taken".
if not ours and redis.call('GET', KEYS[1]) == ARGV[1] then
  ours = redis.call('PEXPIRE', KEYS[1], ARGV[2])
end

if ours then
  local fence
  if ARGV[4] then
    -- RedlockStore hands out the largest fence of several servers, whose
    -- counters each grow on their own: only a clock makes them comparable,
    -- and the caller's is one clock for all of them. The floor is stored as
    -- given, and the last fence comes back in the same call (SET ... GET).
    fence = tonumber(ARGV[4])
    local last = tonumber(redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[3], 'GET') or 0)
    if last >= fence then
      fence = last + 1
      redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', ARGV[3])
    end
    return fence
  end

  fence = redis.call('INCR', KEYS[2])
  if fence == 1 then
    -- The counter did not exist: first use of this key, or it expired, or
    -- the server restarted without persistence and forgot it. Start from the
    -- server clock in microseconds, which is above every fence handed out
    -- before: each of those was at most the clock when it was handed out,
    -- since a counter grows by one per acquire and an acquire and the release
    -- before it take far more than a microsecond.
    local t = redis.call('TIME')
    fence = tonumber(t[1]) * 1000000 + tonumber(t[2])
    -- '%.0f': Lua's default formatting of a 16-digit number drops digits.
    redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', ARGV[3])
  end
  return fence
end

local pttl = redis.call('PTTL', KEYS[1])
if pttl < 0 then
  return 0
end
return -pttl
