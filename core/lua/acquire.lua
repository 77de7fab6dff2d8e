-- acquire: take the lock and hand out its fencing token, in one round trip.
--
-- KEYS[1]  the lock; its value is the holder's random token
-- KEYS[2]  the lock's fence counter (same {hash tag}, so same slot)
-- ARGV[1]  the caller's random token
-- ARGV[2]  the lease, in milliseconds
-- ARGV[3]  how long the fence counter outlives its last use, in milliseconds
--
-- Returns the fence (> 0) when the lock is ours, or when someone else holds
-- it, minus the holder's remaining lease in milliseconds (0: no expiry set).

local ours = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])

-- A client that lost the reply to its first attempt and sent it again finds
-- its own token: the lock is already ours, so say so instead of "taken".
if not ours and redis.call('GET', KEYS[1]) == ARGV[1] then
  ours = redis.call('PEXPIRE', KEYS[1], ARGV[2])
end

if ours then
  -- The fence never goes backwards: one more than the last one handed out,
  -- and never below the server clock in microseconds, so a restart that lost
  -- the counter (no persistence) or a counter that expired still moves on.
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local fence = math.max(tonumber(redis.call('GET', KEYS[2]) or 0) + 1, now)
  -- '%.0f': Lua's default formatting of a 16-digit number drops digits.
  redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', ARGV[3])
  return fence
end

local pttl = redis.call('PTTL', KEYS[1])
if pttl < 0 then
  return 0
end
return -pttl
