-- permit_release: give a permit back if the token holds it, and wake the
-- head of the line, in one round trip; with KEYS[4], also leave the
-- token's cancel marker, so that an acquire with it still on its way takes
-- nothing when it lands.
--
-- KEYS[1]  the permits (see permit_acquire.lua)
-- KEYS[2]  the holders' fences
-- KEYS[3]  the line
-- KEYS[4]  optional: the token's cancel marker
-- ARGV[1]  the token
-- ARGV[2]  the Locker's key, for the wake-up
-- ARGV[3]  with KEYS[4]: how long the marker stays, in milliseconds
--
-- Returns 1 when the token held a live permit, 0 otherwise; an expired
-- permit of the token is cleared all the same.
--
-- A waiter is '<instance>/<wait>': each instance (a Semaphore's Locker)
-- listens on one channel, the key's prefix .. 'wake:' .. instance, and is
-- told the key and the waiter, space-separated.

if KEYS[4] then
  redis.call('SET', KEYS[4], '1', 'PX', ARGV[3])
end
local expires = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expires then
  return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
local head = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
if head then
  local prefix = string.match(ARGV[2], '^[^{]*')
  redis.call('PUBLISH', prefix .. 'wake:' .. string.match(head, '^[^/]*'), ARGV[2] .. ' ' .. head)
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if tonumber(expires) <= now then
  return 0
end
return 1
