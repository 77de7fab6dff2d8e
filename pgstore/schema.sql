-- reqlock's PostgreSQL store: its tables and functions. Store.Migrate runs
-- this file under an advisory lock; teams that run migrations with their
-- own tool run it as it is. Every statement is idempotent.
--
-- Each lock operation is one call to one function below, one round trip.
-- A function's statements each take a fresh snapshot (READ COMMITTED: the
-- store runs its calls at that level whatever the database's default), so
-- once a function holds a key's row lock it sees every change committed
-- before: the row lock serialises the operations on one key, as a Lua
-- script does on Redis. All time is the database's, clock_timestamp().
--
-- Row locks: the functions lock a key's row FOR NO KEY UPDATE, which does
-- not wait for a Guard (FOR KEY SHARE) in a holder's transaction, so that
-- a live lock is refused at once. Only a change of holder locks the row
-- FOR UPDATE, which a Guard holds off: a release of the holder's own lock
-- waits for it, a takeover of a lapsed lease does not wait but reports
-- the key taken.
--
-- Keys: the store sends a key as it is when it is short UTF-8 without NUL,
-- else chr(1) followed by the hex SHA-256 of its bytes, so any key fits.

-- Fences: one sequence for every key is strictly increasing per key too,
-- survives restarts, and leaves nothing behind for a key used once.
CREATE SEQUENCE IF NOT EXISTS reqlock_fence AS bigint;

-- One row per key that is held, handed to a waiter, has waiters in line or
-- cancelled acquires to refuse. A release with none of those deletes the
-- row; the rest are deleted by reqlock_purge once they have lapsed.
CREATE TABLE IF NOT EXISTS reqlock_locks (
  key           text PRIMARY KEY,
  -- the holder's token; '~' || waiter for a lock a release handed to that
  -- waiter; NULL when nobody holds it
  token         text,
  expires       timestamptz NOT NULL DEFAULT '-infinity',
  -- the last fence handed out for the key
  fence         bigint NOT NULL DEFAULT 0,
  -- the waiters in line, '<instance>/<wait>', head first; empty after
  -- line_until
  line          text[] NOT NULL DEFAULT '{}',
  line_until    timestamptz NOT NULL DEFAULT '-infinity',
  -- tokens whose acquires were cancelled: one of them that lands takes
  -- nothing; forgotten after cancels_until
  cancels       text[] NOT NULL DEFAULT '{}',
  cancels_until timestamptz NOT NULL DEFAULT '-infinity'
);

-- Records for replay: written by the holder's release, read instead of
-- the lock, deleted by reqlock_purge once expired.
CREATE TABLE IF NOT EXISTS reqlock_records (
  key     text PRIMARY KEY,
  value   bytea NOT NULL,
  expires timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS reqlock_records_expires ON reqlock_records (expires);

-- Marks of runs of recorded keys (store.RunMarker): a holder's run leaves
-- one as it starts, and its record (reqlock_release_record) or a clean end
-- (reqlock_unmark_run) takes it away; one still there when the next holder
-- starts is a run that lost its lock, whose outcome is unknown. Deleted by
-- reqlock_purge once expired.
CREATE TABLE IF NOT EXISTS reqlock_runs (
  key     text PRIMARY KEY,
  token   text NOT NULL,
  expires timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS reqlock_runs_expires ON reqlock_runs (expires);

-- reqlock_ms is d in whole milliseconds, rounded up, never below 0.
CREATE OR REPLACE FUNCTION reqlock_ms(d interval) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT greatest(0, ceil(extract(epoch FROM d) * 1000))::bigint
$$;

-- reqlock_tell wakes waiter's instance: its Locker listens on the channel
-- 'reqlock:wake:<instance>'. The message is the key, the waiter and, when
-- the lock was handed to the waiter, its fence, space-separated. A key too
-- long for a notification (8000 bytes), or a digest (chr(1)...), is sent
-- as '*', any key, without the fence: the waiter then claims the lock with
-- an acquire.
CREATE OR REPLACE FUNCTION reqlock_tell(p_key text, p_waiter text, p_fence bigint) RETURNS void
LANGUAGE sql AS $$
  SELECT pg_notify('reqlock:wake:' || split_part(p_waiter, '/', 1),
    CASE WHEN octet_length(p_key) + octet_length(p_waiter) < 7900 AND left(p_key, 1) <> chr(1)
         THEN p_key || ' ' || p_waiter || coalesce(' ' || p_fence::text, '')
         ELSE '* ' || p_waiter END)
$$;

-- reqlock_acquire takes the lock for p_token for p_ttl_ms, or says who has
-- it. p_waiter, when not NULL, is a waiter in line: a lock handed to it is
-- taken, and refused it joins the line (kept for p_keep_ms). p_record asks
-- for the key's record first.
--
-- o_status 1: taken, with o_fence, o_remaining_ms waiters still in line
-- (0 on the fast path). 0: held by someone else for
-- o_remaining_ms (a lapsed lease that a Guard-ed transaction still holds:
-- a short hint, the transaction's end is unknown); o_fence is the last
-- fence handed out. 2: the key's record
-- (o_record), nothing taken. 3: this very acquire was cancelled before it
-- landed; nothing taken.
CREATE OR REPLACE FUNCTION reqlock_acquire(p_key text, p_token text, p_ttl_ms bigint, p_waiter text,
  p_record boolean, p_keep_ms bigint,
  OUT o_status int, OUT o_fence bigint, OUT o_remaining_ms bigint, OUT o_record bytea)
LANGUAGE plpgsql AS $$
DECLARE
  r reqlock_locks%ROWTYPE;
  t timestamptz;
  f bigint;
  v_until timestamptz;
  cancelled boolean;
  guarded boolean := false;
  v_line text[];
BEGIN
  IF p_record THEN
    SELECT value INTO o_record FROM reqlock_records WHERE key = p_key AND expires > clock_timestamp();
    IF FOUND THEN
      o_status := 2;
      RETURN;
    END IF;
  END IF;
  LOOP
    -- A free key with no row: the whole acquire is this insert.
    t := clock_timestamp();
    INSERT INTO reqlock_locks (key, token, expires, fence)
      VALUES (p_key, p_token, t + p_ttl_ms * interval '1 millisecond', nextval('reqlock_fence'))
      ON CONFLICT (key) DO NOTHING
      RETURNING reqlock_locks.fence INTO f;
    IF f IS NOT NULL THEN
      -- nextval ran before the insert landed, which may have waited (for
      -- a release of the key in flight): a fence drawn since, maybe this
      -- key's, would be larger. The row is ours now: draw again.
      IF f <> (SELECT last_value FROM reqlock_fence) THEN
        UPDATE reqlock_locks SET fence = nextval('reqlock_fence') WHERE key = p_key RETURNING fence INTO f;
      END IF;
      IF p_record THEN
        -- A release that recorded the work and deleted the row may have
        -- committed after the look above: this statement sees it.
        SELECT value INTO o_record FROM reqlock_records WHERE key = p_key AND expires > clock_timestamp();
        IF FOUND THEN
          DELETE FROM reqlock_locks WHERE key = p_key;
          o_status := 2;
          RETURN;
        END IF;
      END IF;
      o_status := 1;
      o_fence := f;
      RETURN;
    END IF;
    SELECT * INTO r FROM reqlock_locks WHERE key = p_key FOR NO KEY UPDATE;
    EXIT WHEN FOUND; -- else deleted meanwhile: insert again
  END LOOP;

  t := clock_timestamp();
  IF p_record THEN
    SELECT value INTO o_record FROM reqlock_records WHERE key = p_key AND expires > t;
    IF FOUND THEN
      o_status := 2;
      RETURN;
    END IF;
  END IF;
  cancelled := r.cancels_until > t AND p_token = ANY (r.cancels);
  v_line := CASE WHEN r.line_until > t THEN r.line ELSE '{}' END;
  -- Taking a lapsed holder's lease over (a waiter's hand-off too: it
  -- runs under it): a Guard-ed transaction of that holder keeps it until
  -- the transaction ends.
  IF r.token IS NOT NULL AND r.expires <= t AND r.token <> p_token
     AND (p_waiter IS NULL OR r.token <> '~' || p_waiter) THEN
    PERFORM 1 FROM reqlock_locks WHERE key = p_key FOR UPDATE SKIP LOCKED;
    guarded := NOT FOUND;
  END IF;
  IF NOT guarded AND (r.token IS NULL OR r.expires <= t OR r.token = p_token
     OR (p_waiter IS NOT NULL AND r.token = '~' || p_waiter)) THEN
    IF cancelled THEN
      o_status := 3;
      RETURN;
    END IF;
    -- A retry that finds its own token keeps the lease if it is longer:
    -- the holder may have extended it since.
    v_until := t + p_ttl_ms * interval '1 millisecond';
    IF r.token = p_token AND r.expires > v_until THEN
      v_until := r.expires;
    END IF;
    f := nextval('reqlock_fence');
    IF p_waiter IS NOT NULL THEN
      v_line := array_remove(v_line, p_waiter);
    END IF;
    UPDATE reqlock_locks SET token = p_token, expires = v_until, fence = f, line = v_line
      WHERE key = p_key;
    o_status := 1;
    o_fence := f;
    -- How many still wait: the release will have someone to hand to.
    o_remaining_ms := cardinality(v_line);
    RETURN;
  END IF;
  -- Taken: a waiter joins the line, once, unless this attempt was
  -- cancelled (a waiter that left must not stand in line).
  IF p_waiter IS NOT NULL AND NOT cancelled THEN
    IF NOT p_waiter = ANY (v_line) THEN
      v_line := v_line || p_waiter;
    END IF;
    UPDATE reqlock_locks SET line = v_line,
      line_until = t + p_keep_ms * interval '1 millisecond' WHERE key = p_key;
  END IF;
  o_status := 0;
  o_fence := r.fence;
  o_remaining_ms := CASE WHEN guarded THEN 100 ELSE reqlock_ms(r.expires - t) END;
END
$$;

-- reqlock_release gives up p_token's lock and hands it to the head of the
-- line, for p_handoff_ms, with the next fence, telling that waiter alone;
-- or frees it. p_marker_ms, when not NULL, cancels p_token: an acquire of
-- it that lands later takes nothing (whether or not it holds the lock
-- now). p_leaving, when not NULL, leaves the line first. p_sweep > 0 also
-- deletes up to that many lapsed rows and expired records.
--
-- Returns true when the lock (or the hand-off) was p_token's and is passed
-- on or gone, false when it was not: it expired, or someone else holds it.
-- Passing on the holder's own lock waits for its Guard-ed transactions.
CREATE OR REPLACE FUNCTION reqlock_release(p_key text, p_token text, p_marker_ms bigint, p_leaving text,
  p_handoff_ms bigint, p_sweep int) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  r reqlock_locks%ROWTYPE;
  t timestamptz;
  f bigint;
  v_line text[];
  v_cancels text[];
  v_cancels_until timestamptz;
  head text;
BEGIN
  IF p_sweep > 0 THEN
    PERFORM reqlock_sweep(p_sweep);
  END IF;
  LOOP
    -- p_token's own row, locked to change holder at once (waiting for its
    -- Guard-ed transactions): one statement for the common case.
    SELECT * INTO r FROM reqlock_locks WHERE key = p_key AND token = p_token FOR UPDATE;
    EXIT WHEN FOUND;
    SELECT * INTO r FROM reqlock_locks WHERE key = p_key FOR NO KEY UPDATE;
    IF FOUND THEN
      IF r.token = p_token THEN -- became p_token's meanwhile
        PERFORM 1 FROM reqlock_locks WHERE key = p_key FOR UPDATE;
      END IF;
      EXIT;
    END IF;
    IF p_marker_ms IS NULL THEN
      RETURN false;
    END IF;
    -- The acquire to cancel has not landed: leave the marker for it.
    INSERT INTO reqlock_locks (key, cancels, cancels_until)
      VALUES (p_key, ARRAY[p_token], clock_timestamp() + p_marker_ms * interval '1 millisecond')
      ON CONFLICT (key) DO NOTHING;
    IF FOUND THEN
      RETURN false;
    END IF;
  END LOOP;

  t := clock_timestamp();
  v_line := CASE WHEN r.line_until > t THEN r.line ELSE '{}' END;
  IF p_leaving IS NOT NULL THEN
    v_line := array_remove(v_line, p_leaving);
  END IF;
  v_cancels := CASE WHEN r.cancels_until > t THEN r.cancels ELSE '{}' END;
  v_cancels_until := greatest(r.cancels_until, t);
  IF p_marker_ms IS NOT NULL THEN
    IF NOT p_token = ANY (v_cancels) THEN
      v_cancels := v_cancels || p_token;
    END IF;
    v_cancels_until := greatest(v_cancels_until, t + p_marker_ms * interval '1 millisecond');
  END IF;
  IF r.token IS DISTINCT FROM p_token OR r.expires <= t THEN
    UPDATE reqlock_locks SET line = v_line, cancels = v_cancels, cancels_until = v_cancels_until WHERE key = p_key;
    RETURN false;
  END IF;
  IF cardinality(v_line) > 0 THEN
    head := v_line[1];
    f := nextval('reqlock_fence');
    UPDATE reqlock_locks SET token = '~' || head, expires = t + p_handoff_ms * interval '1 millisecond',
      fence = f, line = v_line[2:], cancels = v_cancels, cancels_until = v_cancels_until WHERE key = p_key;
    PERFORM reqlock_tell(p_key, head, f);
  ELSIF cardinality(v_cancels) > 0 THEN
    UPDATE reqlock_locks SET token = NULL, expires = '-infinity', line = '{}',
      cancels = v_cancels, cancels_until = v_cancels_until WHERE key = p_key;
  ELSE
    DELETE FROM reqlock_locks WHERE key = p_key;
  END IF;
  RETURN true;
END
$$;

-- reqlock_release_record writes p_record for the key, kept p_retention_ms,
-- and releases p_token's lock, only if p_token holds it; everyone in line
-- is told, and gets the record rather than the lock. p_marker_ms and
-- p_sweep are reqlock_release's.
CREATE OR REPLACE FUNCTION reqlock_release_record(p_key text, p_token text, p_record bytea,
  p_retention_ms bigint, p_marker_ms bigint, p_sweep int) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  r reqlock_locks%ROWTYPE;
  t timestamptz;
  w text;
BEGIN
  IF p_sweep > 0 THEN
    PERFORM reqlock_sweep(p_sweep);
  END IF;
  -- Only p_token's own row is locked, to change holder (waiting for its
  -- Guard-ed transactions); another holder's is not waited for.
  SELECT * INTO r FROM reqlock_locks WHERE key = p_key AND token = p_token FOR UPDATE;
  t := clock_timestamp();
  IF NOT FOUND OR r.expires <= t THEN
    IF p_marker_ms IS NOT NULL THEN
      PERFORM reqlock_release(p_key, p_token, p_marker_ms, NULL, 0, 0);
    END IF;
    RETURN false;
  END IF;
  INSERT INTO reqlock_records (key, value, expires)
    VALUES (p_key, coalesce(p_record, ''::bytea), t + p_retention_ms * interval '1 millisecond')
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires = EXCLUDED.expires;
  DELETE FROM reqlock_runs WHERE key = p_key;
  IF r.line_until > t THEN
    FOREACH w IN ARRAY r.line LOOP
      PERFORM reqlock_tell(p_key, w, NULL);
    END LOOP;
  END IF;
  IF r.cancels_until > t OR p_marker_ms IS NOT NULL THEN
    UPDATE reqlock_locks SET token = NULL, expires = '-infinity', line = '{}',
      cancels = CASE WHEN r.cancels_until > t THEN r.cancels ELSE '{}' END
                || CASE WHEN p_marker_ms IS NULL THEN '{}'::text[] ELSE ARRAY[p_token] END,
      cancels_until = greatest(r.cancels_until, t + coalesce(p_marker_ms, 0) * interval '1 millisecond')
      WHERE key = p_key;
  ELSE
    DELETE FROM reqlock_locks WHERE key = p_key;
  END IF;
  RETURN true;
END
$$;

-- reqlock_purge deletes up to p_limit rows whose lease, hand-off, line
-- and cancels have all lapsed, and up to p_limit expired records: the
-- tables stay bounded by what is live, without a job of their own. Rows in
-- use (locked) are skipped, not waited for. It returns the larger of the
-- two counts: p_limit means a backlog, and the store sweeps again soon.
CREATE OR REPLACE FUNCTION reqlock_purge(p_limit int) RETURNS int
LANGUAGE sql AS $$
  WITH l AS (
    DELETE FROM reqlock_locks WHERE key IN (
      SELECT key FROM reqlock_locks
      WHERE expires < clock_timestamp() AND line_until < clock_timestamp() AND cancels_until < clock_timestamp()
      LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING 1),
  r AS (
    DELETE FROM reqlock_records WHERE key IN (
      SELECT key FROM reqlock_records WHERE expires < clock_timestamp()
      ORDER BY expires LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING 1),
  m AS (
    DELETE FROM reqlock_runs WHERE key IN (
      SELECT key FROM reqlock_runs WHERE expires < clock_timestamp()
      ORDER BY expires LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING 1)
  SELECT greatest((SELECT count(*) FROM l), (SELECT count(*) FROM r), (SELECT count(*) FROM m))::int
$$;

-- reqlock_sweep is reqlock_purge without the count: the release functions
-- still sweep when asked (p_sweep), as stores of earlier versions ask.
CREATE OR REPLACE FUNCTION reqlock_sweep(p_limit int) RETURNS void
LANGUAGE sql AS $$
  SELECT reqlock_purge(p_limit);
$$;

-- reqlock_mark_run marks the run p_token, the key's holder, is starting,
-- kept p_retention_ms: -1 when p_token does not hold the key (nothing
-- changes), 1 when another run's mark is there (in doubt; with p_again it
-- is replaced by this run's, without it stays), 0 otherwise. The lock's
-- row is locked FOR KEY SHARE, as Guard does: the holder cannot change
-- meanwhile.
CREATE OR REPLACE FUNCTION reqlock_mark_run(p_key text, p_token text, p_retention_ms bigint, p_again boolean)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz := clock_timestamp();
  doubt boolean;
BEGIN
  PERFORM 1 FROM reqlock_locks WHERE key = p_key AND token = p_token AND expires > t FOR KEY SHARE;
  IF NOT FOUND THEN
    RETURN -1;
  END IF;
  SELECT token <> p_token INTO doubt FROM reqlock_runs WHERE key = p_key AND expires > t FOR UPDATE;
  doubt := coalesce(doubt, false);
  IF doubt AND NOT p_again THEN
    RETURN 1;
  END IF;
  INSERT INTO reqlock_runs (key, token, expires)
    VALUES (p_key, p_token, t + p_retention_ms * interval '1 millisecond')
    ON CONFLICT (key) DO UPDATE SET token = EXCLUDED.token, expires = EXCLUDED.expires;
  RETURN CASE WHEN doubt THEN 1 ELSE 0 END;
END
$$;

-- reqlock_unmark_run takes the key's run mark away if p_token holds the
-- key: its run ended cleanly, without a record.
CREATE OR REPLACE FUNCTION reqlock_unmark_run(p_key text, p_token text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM reqlock_locks WHERE key = p_key AND token = p_token AND expires > clock_timestamp() FOR KEY SHARE;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  DELETE FROM reqlock_runs WHERE key = p_key;
  RETURN true;
END
$$;

-- Permits (a core.Semaphore): one row per permit of a key, at most the
-- caller's limit of live ones. Expired rows are pruned by the key's next
-- acquire and by reqlock_purge_permits; a permit is live while expires is
-- ahead. Fences come from reqlock_fence, as the locks'.
CREATE TABLE IF NOT EXISTS reqlock_permits (
  key     text NOT NULL,
  token   text NOT NULL,
  expires timestamptz NOT NULL,
  fence   bigint NOT NULL,
  PRIMARY KEY (key, token)
);
CREATE INDEX IF NOT EXISTS reqlock_permits_expires ON reqlock_permits (expires);

-- Tokens whose permit acquires were cancelled: one of them that lands
-- before until takes nothing.
CREATE TABLE IF NOT EXISTS reqlock_permit_cancels (
  key   text NOT NULL,
  token text NOT NULL,
  until timestamptz NOT NULL,
  PRIMARY KEY (key, token)
);

-- reqlock_permit_lock serialises the acquires and cancels of one key's
-- permits for the rest of the transaction (the call): the count of live
-- permits and the insert that follows it must see each other's. A
-- transaction-level advisory lock, so nothing is left behind; keys whose
-- hashes meet only wait for each other. Only at READ COMMITTED do the
-- statements after it see what was committed while it waited: at a
-- stricter level (a database's default) a permit committed meanwhile is
-- another row, nothing conflicts, and the count would be stale, so it
-- fails as a serialization failure, which the store sends again at READ
-- COMMITTED.
CREATE OR REPLACE FUNCTION reqlock_permit_lock(p_key text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'reqlock: permits need READ COMMITTED' USING ERRCODE = 'serialization_failure';
  END IF;
  PERFORM pg_advisory_xact_lock(1919250803, hashtext(p_key)); -- 'rqps'
END
$$;

-- The lines of waiters for permits: one row per waiter of a key, by
-- arrival (joined, then waiter). A waiter keeps its place while it keeps
-- asking: one that has not asked by until (it died, or was paused) has
-- left, and is pruned by the key's next acquire and by
-- reqlock_purge_permits.
CREATE TABLE IF NOT EXISTS reqlock_permit_waiters (
  key    text NOT NULL,
  waiter text NOT NULL, -- '<instance>/<wait>'
  joined timestamptz NOT NULL,
  until  timestamptz NOT NULL,
  PRIMARY KEY (key, waiter)
);
CREATE INDEX IF NOT EXISTS reqlock_permit_waiters_until ON reqlock_permit_waiters (until);

-- reqlock_tell_permit_heads wakes the first p_n waiters of p_key's line
-- still keeping their places, at most 16. The caller holds the key's
-- permit lock.
CREATE OR REPLACE FUNCTION reqlock_tell_permit_heads(p_key text, p_n int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  w text;
BEGIN
  FOR w IN SELECT waiter FROM reqlock_permit_waiters
      WHERE key = p_key AND until > clock_timestamp()
      ORDER BY joined, waiter LIMIT least(p_n, 16) LOOP
    PERFORM reqlock_tell(p_key, w, NULL);
  END LOOP;
END
$$;

-- reqlock_acquire_permit takes a permit of p_key for p_token, for
-- p_ttl_ms, if fewer than p_limit live permits are held and the line lets
-- the caller in: a caller outside it is admitted only while the places
-- left outnumber the waiters, a waiter (p_waiter) only while fewer
-- waiters stand ahead of it than places are left. A refused waiter joins
-- the line, once, and keeps its place for p_keep_ms from each ask. A
-- waiter admitted with places still left wakes the next in line.
--
-- o_fence > 0: taken (or p_token's own, its lease only growing); 0:
-- refused, the shortest lease left is o_remaining_ms (0 when the places
-- left are the line's); -1: this acquire was cancelled (or its waiter
-- left) before it landed, nothing taken and no place in line.
CREATE OR REPLACE FUNCTION reqlock_acquire_permit(p_key text, p_token text, p_ttl_ms bigint, p_limit int,
  p_waiter text, p_keep_ms bigint, OUT o_fence bigint, OUT o_remaining_ms bigint)
LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz;
  n int;
  first timestamptz;
  waiting int;
  ahead int;
  mine timestamptz;
BEGIN
  PERFORM reqlock_permit_lock(p_key);
  t := clock_timestamp();
  PERFORM 1 FROM reqlock_permit_cancels WHERE key = p_key AND until > t
    AND token IN (p_token, '~' || p_waiter);
  IF FOUND THEN
    o_fence := -1;
    RETURN;
  END IF;
  DELETE FROM reqlock_permits WHERE key = p_key AND expires <= t;
  UPDATE reqlock_permits SET expires = greatest(expires, t + p_ttl_ms * interval '1 millisecond')
    WHERE key = p_key AND token = p_token RETURNING fence INTO o_fence;
  IF FOUND THEN
    RETURN;
  END IF;
  DELETE FROM reqlock_permit_waiters WHERE key = p_key AND until <= t;
  SELECT count(*), min(expires) INTO n, first FROM reqlock_permits WHERE key = p_key;
  SELECT count(*) INTO waiting FROM reqlock_permit_waiters WHERE key = p_key;
  ahead := waiting;
  IF p_waiter IS NOT NULL AND waiting > 0 THEN
    SELECT joined INTO mine FROM reqlock_permit_waiters WHERE key = p_key AND waiter = p_waiter;
    IF FOUND THEN
      SELECT count(*) INTO ahead FROM reqlock_permit_waiters
        WHERE key = p_key AND (joined, waiter) < (mine, p_waiter);
    END IF;
  END IF;
  IF n >= p_limit OR ahead >= p_limit - n THEN
    IF p_waiter IS NOT NULL THEN
      INSERT INTO reqlock_permit_waiters (key, waiter, joined, until)
        VALUES (p_key, p_waiter, t, t + p_keep_ms * interval '1 millisecond')
        ON CONFLICT (key, waiter) DO UPDATE SET until = EXCLUDED.until;
    END IF;
    o_fence := 0;
    o_remaining_ms := CASE WHEN n >= p_limit THEN reqlock_ms(first - t) ELSE 0 END;
    RETURN;
  END IF;
  INSERT INTO reqlock_permits (key, token, expires, fence)
    VALUES (p_key, p_token, t + p_ttl_ms * interval '1 millisecond', nextval('reqlock_fence'))
    RETURNING fence INTO o_fence;
  IF mine IS NOT NULL THEN
    DELETE FROM reqlock_permit_waiters WHERE key = p_key AND waiter = p_waiter;
    waiting := waiting - 1;
  END IF;
  -- Places still left go to the waiters next in line.
  IF waiting > 0 AND p_limit - n > 1 THEN
    PERFORM reqlock_tell_permit_heads(p_key, p_limit - n - 1);
  END IF;
END
$$;

-- The acquire of stores of earlier versions, which knew no line: it is
-- one from outside the line.
CREATE OR REPLACE FUNCTION reqlock_acquire_permit(p_key text, p_token text, p_ttl_ms bigint, p_limit int,
  OUT o_fence bigint, OUT o_remaining_ms bigint)
LANGUAGE sql AS $$
  SELECT * FROM reqlock_acquire_permit(p_key, p_token, p_ttl_ms, p_limit, NULL, 0)
$$;

-- reqlock_release_permit gives p_token's permit back and wakes the head
-- of the line. True when the permit was live; an expired one of the token
-- goes too. The key's permit lock makes a waiter's refusal and its place
-- in line visible to the release that follows it, so no wake-up is lost.
CREATE OR REPLACE FUNCTION reqlock_release_permit(p_key text, p_token text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  live boolean;
BEGIN
  PERFORM reqlock_permit_lock(p_key);
  DELETE FROM reqlock_permits WHERE key = p_key AND token = p_token
    RETURNING expires > clock_timestamp() INTO live;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  PERFORM reqlock_tell_permit_heads(p_key, 1);
  RETURN live;
END
$$;

-- reqlock_leave_permit_line takes p_waiter out of p_key's line, wakes the
-- waiter now at its head, and leaves p_waiter's cancel marker ('~' ||
-- p_waiter) for p_marker_ms: an attempt of it that lands later neither
-- takes a permit nor stands in line again.
CREATE OR REPLACE FUNCTION reqlock_leave_permit_line(p_key text, p_waiter text, p_marker_ms bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM reqlock_permit_lock(p_key);
  INSERT INTO reqlock_permit_cancels (key, token, until)
    VALUES (p_key, '~' || p_waiter, clock_timestamp() + p_marker_ms * interval '1 millisecond')
    ON CONFLICT (key, token) DO UPDATE SET until = greatest(reqlock_permit_cancels.until, EXCLUDED.until);
  DELETE FROM reqlock_permit_waiters WHERE key = p_key AND waiter = p_waiter;
  IF FOUND THEN
    PERFORM reqlock_tell_permit_heads(p_key, 1);
  END IF;
END
$$;

-- reqlock_cancel_permit gives p_token's permit back, if it holds one, and
-- leaves its cancel marker for p_marker_ms: an acquire of it that lands
-- later takes nothing. True when a live permit was given back.
CREATE OR REPLACE FUNCTION reqlock_cancel_permit(p_key text, p_token text, p_marker_ms bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  live boolean;
BEGIN
  PERFORM reqlock_permit_lock(p_key);
  INSERT INTO reqlock_permit_cancels (key, token, until)
    VALUES (p_key, p_token, clock_timestamp() + p_marker_ms * interval '1 millisecond')
    ON CONFLICT (key, token) DO UPDATE SET until = greatest(reqlock_permit_cancels.until, EXCLUDED.until);
  DELETE FROM reqlock_permits WHERE key = p_key AND token = p_token
    RETURNING expires > clock_timestamp() INTO live;
  IF FOUND THEN
    PERFORM reqlock_tell_permit_heads(p_key, 1);
  END IF;
  RETURN coalesce(live, false);
END
$$;

-- reqlock_purge_permits deletes up to p_limit expired permits, up to
-- p_limit lapsed cancel markers and up to p_limit waiters that stopped
-- asking, skipping rows in use; it returns the largest count, as
-- reqlock_purge does.
CREATE OR REPLACE FUNCTION reqlock_purge_permits(p_limit int) RETURNS int
LANGUAGE sql AS $$
  WITH p AS (
    DELETE FROM reqlock_permits WHERE (key, token) IN (
      SELECT key, token FROM reqlock_permits WHERE expires < clock_timestamp()
      ORDER BY expires LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING 1),
  c AS (
    DELETE FROM reqlock_permit_cancels WHERE (key, token) IN (
      SELECT key, token FROM reqlock_permit_cancels WHERE until < clock_timestamp()
      LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING 1),
  w AS (
    DELETE FROM reqlock_permit_waiters WHERE (key, waiter) IN (
      SELECT key, waiter FROM reqlock_permit_waiters WHERE until < clock_timestamp()
      LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING 1)
  SELECT greatest((SELECT count(*) FROM p), (SELECT count(*) FROM c), (SELECT count(*) FROM w))::int
$$;
