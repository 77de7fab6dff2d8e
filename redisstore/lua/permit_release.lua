-- permit_release: give a permit back if the token holds it, in one round
-- trip; with KEYS[3], also leave the token's cancel marker, so that an
-- acquire with it still on its way takes nothing when it lands.
--
-- KEYS[1]  the permits (see permit_acquire.lua)
-- KEYS[2]  the holders' fences
-- KEYS[3]  optional: the token's cancel marker
-- ARGV[1]  the token
-- ARGV[2]  with KEYS[3]: how long the marker stays, in milliseconds
--
-- Returns 1 when the token held a live permit, 0 otherwise; an expired
-- permit of the token is cleared all the same.

if KEYS[3] then
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[2])
end
local expires = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expires then
  return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if tonumber(expires) <= now then
  return 0
end
return 1
