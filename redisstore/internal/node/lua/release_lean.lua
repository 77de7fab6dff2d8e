-- release_lean: give the lock up only if it still holds our token, and
-- hand it to the next waiter in line, in one round trip; release.lua
-- without its rare parts (a cancel marker, a waiter leaving the line),
-- for a release that needs neither.
--
-- KEYS[1]  the lock
-- KEYS[2]  the key's line of waiters (see acquire.lua)
-- KEYS[3]  the lock's fence counter (see acquire_lean.lua)
-- KEYS[4]  the line's sign: set while someone may stand in line (see
--          acquire.lua)
-- ARGV[1]  the holder's token
-- ARGV[2]  how long a hand-off waits to be claimed, in milliseconds
-- ARGV[3]  '1': tell everyone in line and hand the lock to nobody
--          (RedlockStore, see release.lua)
--
-- Returns 1 when the lock was ours and is passed on or gone, 0 when it was
-- not ours, and that holder keeps it. Why the line and the hand-off work as
-- they do: release.lua.

-- The lock and the line's sign in one call: with no sign, nobody is in
-- line, and the line is not looked at.
local got = redis.call('MGET', KEYS[1], KEYS[4])
if got[1] ~= ARGV[1] then
  return 0
end
if not got[2] then
  -- Nobody in line, the common case: the lock goes, and nobody is told.
  redis.call('DEL', KEYS[1])
  return 1
end

local head
if ARGV[3] ~= '1' then
  head = redis.call('LPOP', KEYS[2])
  if not head then
    -- The line emptied since the sign was set: the sign goes too.
    redis.call('DEL', KEYS[1], KEYS[4])
    return 1
  end
end

-- Tell a waiter's instance, on its channel, the key, the waiter and the
-- fence it is handed (none: it is not handed the lock).
local function tell(waiter, fence)
  local msg = KEYS[1] .. ' ' .. waiter
  if fence then
    msg = msg .. ' ' .. string.format('%.0f', fence)
  end
  local prefix = string.match(KEYS[1], '^[^{]*')
  redis.call('PUBLISH', prefix .. 'wake:' .. string.match(waiter, '^[^/]*'), msg)
end

if head then
  redis.call('SET', KEYS[1], '~' .. head, 'PX', ARGV[2])
  -- The next fence, as acquire_lean.lua counts it, for the head.
  local lifetime = math.max(redis.call('PTTL', KEYS[3]), 60000)
  local t = redis.call('TIME')
  local fence = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = redis.call('SET', KEYS[3], fence, 'PX', lifetime, 'GET')
  if last and #last > 15 and (#last > 16 or last >= '9007199254740991') then
    -- Too large for a number: the counter goes back, and the head, told
    -- without a fence, claims the hand-off with acquire.lua, which counts
    -- in digits.
    redis.call('SET', KEYS[3], last, 'PX', lifetime)
    fence = nil
  elseif last and tonumber(last) >= fence then
    fence = tonumber(last) + 1
    redis.call('SET', KEYS[3], fence, 'PX', lifetime)
  end
  tell(head, fence)
  return 1
end

-- ARGV[3]: everyone in line is told, nobody is handed the lock.
redis.call('DEL', KEYS[1], KEYS[4])
local all = redis.call('LRANGE', KEYS[2], 0, -1)
if #all > 0 then
  redis.call('DEL', KEYS[2])
  for _, waiter in ipairs(all) do
    tell(waiter)
  end
end
return 1
