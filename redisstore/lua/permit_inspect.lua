-- permit_inspect: the live permits of a key, without changing anything.
--
-- KEYS[1]  the permits (see permit_acquire.lua)
-- KEYS[2]  the holders' fences
--
-- Returns a flat array: for each holder its label (the part of its token
-- after the first '.', '' for none: the token itself never leaves the
-- script), its remaining lease in milliseconds, and its fence.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
local out = {}
for i = 1, #live, 2 do
  local token = live[i]
  local dot = string.find(token, '.', 1, true)
  local label = ''
  if dot then
    label = string.sub(token, dot + 1)
  end
  out[#out + 1] = label
  out[#out + 1] = tonumber(live[i + 1]) - now
  out[#out + 1] = redis.call('HGET', KEYS[2], token) or '0'
end
return out
