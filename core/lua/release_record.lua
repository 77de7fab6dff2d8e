-- release_record: record the result of the work the lock guarded, then
-- release the lock, only if it still holds our token, in one round trip.
--
-- KEYS[1]  the lock
-- KEYS[2]  the key's record (same {hash tag}, so same slot)
-- ARGV[1]  the holder's token
-- ARGV[2]  the record
-- ARGV[3]  how long the record is kept, in milliseconds
--
-- Returns 1 when the record is written and the lock released, 0 when the
-- lock is not ours (it expired, or someone else holds it now): then nothing
-- is written, so a holder that paused past its lease cannot overwrite the
-- record of the holder that followed it.

if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
  return redis.call('DEL', KEYS[1])
end
return 0
