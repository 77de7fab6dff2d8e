-- fence: the fencing token arithmetic that acquire.lua and release.lua
-- share; the Go side sends it ahead of each of them, as one script.
--
-- Fences are kept and returned as strings of decimal digits: Lua's numbers
-- are doubles, exact only up to 2^53, and a fence must never repeat.

-- a < b, for strings of digits without leading zeros.
local function less(a, b)
  if #a ~= #b then
    return #a < #b
  end
  return a < b
end

-- s + 1, for a string of digits.
local function succ(s)
  local i = #s
  while i > 0 and s:byte(i) == 57 do -- '9'
    i = i - 1
  end
  if i == 0 then
    return '1' .. string.rep('0', #s)
  end
  return s:sub(1, i - 1) .. string.char(s:byte(i) + 1) .. string.rep('0', #s - i)
end

-- Up to 19 digits: every such number fits in a uint64.
local maxDigits = 19

-- The next fence from the counter at key, which is kept for ttl ms: the
-- larger of the last fence + 1 and clock (in microseconds; nil: the
-- server's, asked with TIME). So it is above every fence handed out before, also when the
-- counter was lost (a restart without persistence, an expired counter) or
-- went back in time (a restart from an older snapshot, a failover to a
-- replica that lagged), as long as the clock does not step back further
-- than that. Returns nil when the counter is exhausted; then it is left as
-- it was.
local function nextFence(key, clock, ttl)
  if not clock then
    local t = redis.call('TIME')
    clock = t[1] .. string.format('%06d', tonumber(t[2]))
  end
  -- Store the clock and read the last fence in one call (SET ... GET).
  local last = redis.call('SET', key, clock, 'PX', ttl, 'GET')
  if not last or less(last, clock) then
    return clock
  end
  local fence = succ(last)
  if #fence > maxDigits then
    redis.call('SET', key, last, 'PX', ttl)
    return nil
  end
  redis.call('SET', key, fence, 'PX', ttl)
  return fence
end

-- A fence as a reply: below 2^53 a Lua number holds it exactly, and an
-- integer costs the client less to read than a string.
local function fenceReply(fence)
  if less(fence, '9007199254740992') then
    return tonumber(fence)
  end
  return fence
end
