-- acquire_lean: take a lock that nobody else wants, and hand out its
-- fencing token, in one round trip, doing no more than that path needs.
-- Anything rare (our own token already there, a fence too large for a Lua
-- number, an odd clock) it leaves untouched and answers 'again': the caller
-- then sends acquire.lua, which handles every case. A waiter in line always
-- sends acquire.lua.
--
-- KEYS[1]  the lock; its value is the holder's random token
-- KEYS[2]  the lock's fence counter (same {hash tag}, so same slot)
-- KEYS[3]  the token's cancel marker (see release.lua)
-- KEYS[4]  optional: the key's recorded result (see release_record.lua)
-- KEYS[5]  optional, with KEYS[4]: the key's run mark (see mark_run.lua),
--          to mark the run as the lock is taken (store.AcquireMarker)
-- ARGV[1]  the caller's random token
-- ARGV[2]  the lease, in milliseconds
-- ARGV[3]  the fence counter's lifetime, in milliseconds
-- ARGV[4]  optional: the server's clock in microseconds as the caller
--          reckons it (see clock.go), or RedlockStore's own (see
--          acquire.lua); absent or '': the script asks the server (TIME)
-- ARGV[5]  with KEYS[5]: how long the mark is kept, in milliseconds
-- ARGV[6]  with KEYS[5]: '1' to run again over another run's mark
--
-- Returns the fence when the lock is ours (with the server's clock, in a
-- two-element array, when ARGV[4] is absent; with KEYS[5], in a
-- three-element array: the fence, the server's clock or 0, and 1 when the
-- run before is in doubt, else 0); minus the holder's remaining
-- lease in milliseconds (0: no expiry set) when someone else holds it; the
-- record, in a one-element array, when KEYS[4] is given and there; or
-- 'again'.
--
-- The fence is the larger of the last one + 1 and the clock in
-- microseconds, for the reasons fence.lua gives, counted here in Lua
-- numbers: doubles, exact below 2^53, which a clock in microseconds stays
-- under until the year 2255. A counter or clock at or above 2^53 - 1 is
-- left to fence.lua's digits. Nothing is defined as a function: the server
-- would build each one anew on every run, and three of them cost it about
-- what one more call does.

-- A key whose work was done already answers with its record, and nothing
-- is taken.
if KEYS[4] then
  local record = redis.call('GET', KEYS[4])
  if record then
    return { record }
  end
end

-- A clock that is not a plain number below 2^53: acquire.lua refuses it,
-- or counts with it exactly.
local now = ARGV[4]
if now == '' then
  now = nil
end
if now then
  if not ((#now < 16 or (#now == 16 and now < '9007199254740991')) and now:match('^[1-9]%d*$')) then
    return 'again'
  end
  now = tonumber(now)
end

if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  -- Our own token: a copy of this attempt got here first. acquire.lua
  -- decides whether the lock is ours.
  if redis.call('GET', KEYS[1]) == ARGV[1] then
    return 'again'
  end
  local pttl = redis.call('PTTL', KEYS[1])
  if pttl < 0 then
    pttl = 0
  end
  return -pttl
end

-- The caller gave up on this very attempt and cleaned up before it landed
-- (a delayed command): nobody is waiting for this lock.
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('DEL', KEYS[1])
  return redis.error_reply('ERR reqlock: acquire landed after it was cancelled')
end

-- Sent without a clock, the script reads the server's, and sends it back
-- with the fence: the caller reckons the clock from it for a while (see
-- clock.go), and the acquires after this one need no TIME.
local told
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  told = now
end
-- Store now and read the last fence in one call (SET ... GET): with no
-- counter (a one-off key, a restart without persistence) or one behind the
-- clock, that is all.
local fence = now
local last = redis.call('SET', KEYS[2], now, 'PX', ARGV[3], 'GET')
if last then
  if #last > 15 and (#last > 16 or last >= '9007199254740991') then
    -- Too large for a number: put the counter back, give the lock back,
    -- and let acquire.lua count in digits.
    redis.call('SET', KEYS[2], last, 'PX', ARGV[3])
    redis.call('DEL', KEYS[1])
    return 'again'
  end
  last = tonumber(last)
  if last >= now then
    -- Handed out faster than the clock ticks, or the clock stepped back.
    fence = last + 1
    redis.call('SET', KEYS[2], fence, 'PX', ARGV[3])
  end
end
-- Asked to mark the run: what mark_run.lua does, now that the lock is
-- ours and nothing can send us back to acquire.lua. With no mark there,
-- ours is set for ARGV[5] ms in one call. Our own (a copy of this attempt
-- set it) is kept as long. Another run's mark says that run is in doubt;
-- it stays, and with ARGV[6] its retention starts again, so that it tells
-- the holder after this run too if this one ends neither with a record
-- nor cleanly.
if KEYS[5] then
  local doubt = 0
  if not redis.call('SET', KEYS[5], ARGV[1], 'NX', 'PX', ARGV[5]) then
    if redis.call('GET', KEYS[5]) ~= ARGV[1] then
      doubt = 1
    end
    if doubt == 0 or ARGV[6] == '1' then
      redis.call('PEXPIRE', KEYS[5], ARGV[5])
    end
  end
  return { fence, told or 0, doubt }
end
if told then
  return { fence, told }
end
return fence
