-- unmark_run: take the run mark away, only if the lock still holds our
-- token: the run ended cleanly, without a record. One round trip.
--
-- KEYS[1]  the lock
-- KEYS[2]  the key's run mark
-- ARGV[1]  the holder's token
--
-- Returns 1 when done, 0 when the lock is not ours (the mark stays).

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[2])
return 1
