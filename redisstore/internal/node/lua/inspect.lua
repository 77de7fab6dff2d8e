-- inspect: what the store holds for a lock, in one round trip. It only
-- reads: no lease, fence or line changes.
--
-- KEYS[1]  the lock; its value is the holder's token, or its token, '.' and
--          its label (see acquire.lua); '~' .. a waiter (with its label
--          likewise) under a release's hand-off to that waiter (see
--          release.lua)
-- KEYS[2]  the lock's fence counter: the last fence handed out
-- KEYS[3]  the key's line of waiters
--
-- Returns { state, pttl, fence, waiting, holder, id }:
--   state    0 free, 1 held, 2 handed off to the next waiter in line
--   pttl     the lock's remaining lease in milliseconds; 0 when free, -1
--            when the lock has no expiry (set by hand)
--   fence    the fence counter, a string of digits, or '' when there is none
--   waiting  how many stand in the line
--   holder   the holder's label: what follows the first '.' of the value
--   id       a digest of the value, so that RedlockStore can tell whether
--            its nodes agree on one holder
-- The token itself stays here: it is the holder's secret.

local value = redis.call('GET', KEYS[1])
local fence = redis.call('GET', KEYS[2]) or ''
local waiting = redis.call('LLEN', KEYS[3])
if not value then
  return { 0, 0, fence, waiting, '', '' }
end

local pttl = redis.call('PTTL', KEYS[1])
local id = redis.sha1hex(value)
local state = 1
if string.sub(value, 1, 1) == '~' then
  state = 2
end
local holder = ''
local dot = string.find(value, '.', 1, true)
if dot then
  holder = string.sub(value, dot + 1)
end
return { state, pttl, fence, waiting, holder, id }
