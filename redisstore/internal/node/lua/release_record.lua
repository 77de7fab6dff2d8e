-- release_record: record the result of the work the lock guarded, then
-- release the lock, only if it still holds our token, in one round trip.
--
-- KEYS[1]  the lock
-- KEYS[2]  the key's record (same {hash tag}, so same slot)
-- KEYS[3]  the key's line of waiters (see acquire.lua and release.lua)
-- KEYS[4]  the key's run mark (see mark_run.lua): the record settles the run
-- KEYS[5]  the token's cancel marker (see release.lua); only with ARGV[4]
-- ARGV[1]  the holder's token
-- ARGV[2]  the record
-- ARGV[3]  how long the record is kept, in milliseconds
-- ARGV[4]  how long to keep the cancel marker, in milliseconds; absent: none
--
-- Returns 1 when the record is written and the lock released, 0 when the
-- lock is not ours (it expired, or someone else holds it now): then nothing
-- is written, so a holder that paused past its lease cannot overwrite the
-- record of the holder that followed it.
--
-- Everyone in line gets the record, not the lock: the line is dropped and
-- each waiter told, on its instance's channel (see release.lua).

if ARGV[4] then
  redis.call('SET', KEYS[5], '1', 'PX', ARGV[4])
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
-- The mark goes with the lock, whatever its retention: a mark kept longer
-- than the record would tell the next holder of a doubt the record settled.
redis.call('DEL', KEYS[1], KEYS[4])
local all = redis.call('LRANGE', KEYS[3], 0, -1)
if #all > 0 then
  redis.call('DEL', KEYS[3])
  local prefix = string.match(KEYS[1], '^[^{]*')
  for _, waiter in ipairs(all) do
    local instance = string.match(waiter, '^[^/]*')
    redis.call('PUBLISH', prefix .. 'wake:' .. instance, KEYS[1] .. ' ' .. waiter)
  end
end
return 1
