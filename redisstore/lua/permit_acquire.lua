-- permit_acquire: take one of a key's permits (at most ARGV[3] holders at
-- once) and hand out its fence, in one round trip.
--
-- KEYS[1]  the permits: a sorted set of holders' tokens, scored by the
--          server-clock millisecond their lease ends
-- KEYS[2]  each holder's fence: a hash, token -> fence
-- KEYS[3]  the permits' fence counter
-- KEYS[4]  the token's cancel marker (see permit_release.lua)
-- KEYS[5]  the line: waiters by arrival, '<instance>/<wait>' scored by the
--          server clock in microseconds when they joined
-- KEYS[6]  the line's liveness: the same waiters by the millisecond they
--          last asked
-- ARGV[1]  the caller's random token
-- ARGV[2]  the lease, in milliseconds
-- ARGV[3]  the caller's limit: granted only while fewer permits are held
-- ARGV[4]  the fence counter's lifetime, in milliseconds
-- ARGV[5]  the waiter in line whose attempt this is; '' for none
-- ARGV[6]  the Locker's key, for wake-ups (see permit_release.lua)
-- ARGV[7]  how long a waiter keeps its place without asking, in ms
--
-- Returns the fence when the permit is ours, or minus the shortest lease
-- left among the holders, in milliseconds, when the key is full (0 when
-- the places left are the line's).
--
-- The line is served in turn: a caller outside it is admitted only while
-- the places left outnumber the waiters, and a waiter only while fewer
-- waiters stand ahead of it than places are left. A refused waiter joins
-- the line, once; one that stops asking for ARGV[7] leaves it.
--
-- Every key shares the lock key's {hash tag}, so all of them sit in one
-- Cluster slot. Expired permits are pruned here first: a holder that died
-- frees its place when its lease ends, whoever comes next.

local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now = math.floor(nowUs / 1000)
local token = ARGV[1]
local lease = tonumber(ARGV[2])

-- The caller gave up on this very attempt and cleaned up before it landed
-- (a delayed command): nobody is waiting for this permit.
if redis.call('EXISTS', KEYS[4]) == 1 then
  return redis.error_reply('ERR reqlock: permit acquire landed after it was cancelled')
end

local waiter = ARGV[5]
local placeKept = tonumber(ARGV[7])
local waiting = redis.call('ZCARD', KEYS[5])
if waiting > 0 then
  local gone = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', now - placeKept)
  if #gone > 0 then
    for i = 1, #gone, 1000 do
      local chunk = { unpack(gone, i, math.min(i + 999, #gone)) }
      redis.call('ZREM', KEYS[5], unpack(chunk))
      redis.call('ZREM', KEYS[6], unpack(chunk))
    end
    waiting = redis.call('ZCARD', KEYS[5])
  end
end

local held = redis.call('ZCARD', KEYS[1])
if held > 0 then
  local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
  if #expired > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
    -- unpack has a bound on its arguments: forget the fences in chunks.
    for i = 1, #expired, 1000 do
      redis.call('HDEL', KEYS[2], unpack(expired, i, math.min(i + 999, #expired)))
    end
    held = held - #expired
  end
end

-- Both keys live as long as the longest permit: a lease that ends later
-- than the keys' pushes their expiry out.
local function keep(ends)
  if redis.call('PTTL', KEYS[1]) < ends - now then
    redis.call('PEXPIRE', KEYS[1], ends - now)
    redis.call('PEXPIRE', KEYS[2], ends - now)
  end
end

-- A refused waiter stands in line, in the place it first took.
local function join()
  redis.call('ZADD', KEYS[5], 'NX', nowUs, waiter)
  redis.call('ZADD', KEYS[6], now, waiter)
  redis.call('PEXPIRE', KEYS[5], placeKept)
  redis.call('PEXPIRE', KEYS[6], placeKept)
end

if held > 0 then
  -- Our own token: a copy of this attempt got here first. The permit is
  -- ours, its lease only growing.
  local mine = redis.call('ZSCORE', KEYS[1], token)
  if mine then
    if now + lease > tonumber(mine) then
      redis.call('ZADD', KEYS[1], now + lease, token)
      keep(now + lease)
    end
    return tonumber(redis.call('HGET', KEYS[2], token))
  end
  if held >= tonumber(ARGV[3]) then
    if waiter ~= '' then
      join()
    end
    local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return -(tonumber(first[2]) - now)
  end
end

-- The places left, and the waiters ahead of this caller.
local room = tonumber(ARGV[3]) - held
local ahead = waiting
if waiter ~= '' then
  ahead = redis.call('ZRANK', KEYS[5], waiter) or waiting
end
if ahead >= room then
  if waiter ~= '' then
    join()
  end
  return 0
end

-- The fence is the larger of the last one + 1 and the clock in
-- microseconds, so that it keeps growing when the counter is lost (a
-- restart without persistence, an expired counter). Lua numbers are exact
-- below 2^53, which a clock in microseconds stays under until 2255.
local fence = nowUs
-- Numbers go to Redis as strings of digits: Lua would print these in
-- exponent form.
local last = redis.call('SET', KEYS[3], string.format('%d', nowUs), 'PX', ARGV[4], 'GET')
if last and tonumber(last) >= nowUs then
  fence = tonumber(last) + 1
  redis.call('SET', KEYS[3], string.format('%d', fence), 'PX', ARGV[4])
end
redis.call('ZADD', KEYS[1], now + lease, token)
redis.call('HSET', KEYS[2], token, string.format('%d', fence))
if waiter ~= '' and ahead < waiting then
  redis.call('ZREM', KEYS[5], waiter)
  redis.call('ZREM', KEYS[6], waiter)
  waiting = waiting - 1
end
-- Places still left go to the waiters next in line: wake them.
if waiting > 0 and room > 1 then
  local prefix = string.match(ARGV[6], '^[^{]*')
  for _, w in ipairs(redis.call('ZRANGE', KEYS[5], 0, math.min(room - 1, 16) - 1)) do
    redis.call('PUBLISH', prefix .. 'wake:' .. string.match(w, '^[^/]*'), ARGV[6] .. ' ' .. w)
  end
end
if held == 0 then
  -- New keys, with no expiry yet.
  redis.call('PEXPIRE', KEYS[1], lease)
  redis.call('PEXPIRE', KEYS[2], lease)
else
  keep(now + lease)
end
return fence
