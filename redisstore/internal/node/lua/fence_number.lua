-- fence_number: the next fence as a Lua number, for the lean scripts
-- (acquire_lean.lua, release_lean.lua); the Go side sends it ahead of each,
-- as one script.
--
-- Lua's numbers are doubles, exact up to 2^53. A clock in microseconds
-- stays below that until the year 2255, and so does a counter that only
-- ever moved from such a clock one step at a time. Numbers cost the server
-- less than fence.lua's arithmetic on strings of digits; a counter too
-- large for them is left to fence.lua, which the caller then runs.

-- Whether s, a string of decimal digits without leading zeros, is below
-- 2^53 - 1: then s and s + 1 are both exact as numbers.
local function exact(s)
  return #s < 16 or (#s == 16 and s < '9007199254740991')
end

-- The next fence from the counter at key, which is kept for ttl ms: the
-- larger of the last fence + 1 and now (a clock in microseconds), for the
-- reasons fence.lua gives. Returns nil, with the counter left as it was,
-- when the last fence is too large to count on as a number.
local function nextNumber(key, now, ttl)
  -- Store now and read the last fence in one call (SET ... GET): when the
  -- clock is ahead of the counter, as after a restart, that is all.
  local last = redis.call('SET', key, now, 'PX', ttl, 'GET')
  if not last then
    return now
  end
  if not exact(last) then
    redis.call('SET', key, last, 'PX', ttl)
    return nil
  end
  local n = tonumber(last)
  if n < now then
    return now
  end
  -- Handed out faster than the clock ticks, or the clock stepped back.
  redis.call('SET', key, n + 1, 'PX', ttl)
  return n + 1
end

-- The server's clock in microseconds, as a number.
local function serverMicros()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
