-- permit_ttl: the remaining lease of the token's permit, in milliseconds,
-- or -1 when it holds no live one. Read only.
--
-- KEYS[1]  the permits (see permit_acquire.lua)
-- ARGV[1]  the token

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expires = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expires or tonumber(expires) <= now then
  return -1
end
return tonumber(expires) - now
