-- mark_run: mark the run the lock's holder is starting (store.RunMarker),
-- in one round trip.
--
-- KEYS[1]  the lock
-- KEYS[2]  the key's run mark (same {hash tag}, so same slot)
-- ARGV[1]  the holder's token
-- ARGV[2]  how long the mark is kept, in milliseconds
-- ARGV[3]  '1': run again over a mark of another run (replace it)
--
-- Returns -1 when the lock is not ours (nothing changes), 1 when another
-- run's mark is there (that run is in doubt: it lost its lock without a
-- record), 0 otherwise. A mark of our own token (a retried call) is no
-- doubt. Without ARGV[3] a mark of another run stays as it is, so that the
-- next holder is told too.

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
local old = redis.call('GET', KEYS[2])
local doubt = old and old ~= ARGV[1]
if doubt and ARGV[3] ~= '1' then
  return 1
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
if doubt then
  return 1
end
return 0
