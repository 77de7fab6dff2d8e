-- acquire: take the lock and hand out its fencing token, in one round trip.
--
-- KEYS[1]  the lock; its value is the holder's random token
-- KEYS[2]  the lock's fence counter (same {hash tag}, so same slot)
-- ARGV[1]  the caller's random token
-- ARGV[2]  the lease, in milliseconds
-- ARGV[3]  the fence counter's lifetime, in milliseconds
-- ARGV[4]  optional: the caller's clock in microseconds, used instead of
--          the server's (RedlockStore, see below)
--
-- Needs Redis 6.2 or later (SET ... GET).
--
-- Returns the fence (> 0) when the lock is ours, or when someone else holds
-- it, minus the holder's remaining lease in milliseconds (0: no expiry set).
--
-- The common case is three calls, SET NX, TIME and SET GET: every
-- redis.call costs about a microsecond of server time, and this script is
-- the hot path.

local ours = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])

-- A client that lost the reply to its first attempt and sent it again finds
-- its own token: the lock is already ours, so say so instead of "taken".
if not ours and redis.call('GET', KEYS[1]) == ARGV[1] then
  ours = redis.call('PEXPIRE', KEYS[1], ARGV[2])
end

if ours then
  -- The fence is max(last fence + 1, a clock in microseconds): above every
  -- fence handed out before, also when the counter was lost (a restart
  -- without persistence, an expired counter) or went back in time (a restart
  -- from an older snapshot, a failover to a replica that lagged), as long as
  -- the clock does not step back further than that. The clock is the
  -- server's, or for RedlockStore the caller's (ARGV[4]): its fence is the
  -- largest of several servers', and only one clock makes those comparable.
  -- Both are kept as strings of digits, which Lua never reformats.
  local floor = ARGV[4]
  if not floor then
    local t = redis.call('TIME')
    floor = t[1] .. string.format('%06d', tonumber(t[2]))
  end
  local fence = tonumber(floor)
  -- Store the floor and read the last fence in one call (SET ... GET).
  local last = tonumber(redis.call('SET', KEYS[2], floor, 'PX', ARGV[3], 'GET') or 0)
  if last >= fence then
    fence = last + 1
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
