-- permit_extend: renew the lease of a live permit of the token, in one
-- round trip. The lease only grows.
--
-- KEYS[1]  the permits (see permit_acquire.lua)
-- KEYS[2]  the holders' fences
-- ARGV[1]  the token
-- ARGV[2]  the lease, in milliseconds
--
-- Returns 1 when renewed, 0 when the token holds no live permit.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expires = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expires or tonumber(expires) <= now then
  return 0
end
local until_ = now + tonumber(ARGV[2])
if until_ > tonumber(expires) then
  redis.call('ZADD', KEYS[1], 'XX', until_, ARGV[1])
  -- Both keys live as long as the longest permit.
  if redis.call('PTTL', KEYS[1]) < until_ - now then
    redis.call('PEXPIRE', KEYS[1], until_ - now)
    redis.call('PEXPIRE', KEYS[2], until_ - now)
  end
end
return 1
