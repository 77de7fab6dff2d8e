// Package pgstore keeps reqlock's locks in PostgreSQL, for services that
// run Postgres and no Redis: one request per key across every instance,
// and writes that commit only under the lock (Guard).
//
//	pool, _ := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
//	store := pgstore.New(pool)
//	_ = store.Migrate(ctx) // or ship Schema with your own migrations
//	locker := core.NewLocker(store)
//
// The store implements the whole contract a core.Locker uses: acquire,
// batched extend, release and TTL by the database's clock alone
// (clock_timestamp(), so holders never compare clocks); fences from one
// sequence, strictly increasing per key across restarts and lapsed
// leases; the cancel of an acquire that pgx gave up on but that may still
// commit; records for replay, written in the release's own transaction
// only while the token holds the lock; lines of waiters served in turn
// across instances and woken at release by LISTEN/NOTIFY; and Inspect.
// Every middleware (Gin, Echo v4 and v5, net/http) works on it unchanged.
//
// # Guard
//
// A lock alone cannot stop a holder that paused past its lease (a GC
// pause, a stopped VM) from writing after the next holder took the key.
// When the lock and the data live in the same database, Guard closes that
// gap: called in the caller's transaction, it fails with core.ErrNotHeld
// when the lock is no longer held, and otherwise locks the key's row so
// that no other holder can take the key before the transaction ends. The
// holder's writes in that transaction then commit under the lock, or not
// at all. QueueGuard does the same inside a pgx.Batch, without a round
// trip of its own. A guarded lock holds up no one else: while its lease
// runs, a duplicate is refused at once; once it ran out under the open
// transaction, a takeover is refused as taken, with a short hint, until
// the transaction ends. At REPEATABLE READ or SERIALIZABLE, obtain the
// lock before the transaction's first statement. For a lock kept elsewhere (Redis), package fence makes
// a SQL write refuse a stale fence instead.
//
// # WithTx
//
// With WithTx, core.Locker.Once runs its function in a transaction the
// store began and guarded, reached with Tx(ctx), and writes the run's
// record and releases the lock in that transaction before its COMMIT: the
// function's writes and the record land together or not at all, so a
// retry replays or runs once more, and never writes twice.
//
// # Layout
//
// Schema (schema.sql) creates a sequence, reqlock_fence, two tables,
// reqlock_locks (a row per key that is held, handed to a waiter, has
// waiters in line or cancelled acquires to refuse) and reqlock_records
// (replay records), and the functions each operation calls, each one
// round trip serialised per key by the key's row lock. An uncontended
// acquire is a single INSERT and its release a single DELETE, as a
// hand-written lock would send.
//
// # Operating it
//
//   - Use the primary. A replica cannot take writes, and reads from one
//     may be behind.
//   - With asynchronous replication a failover may lose the locks and
//     records the old primary had not yet shipped, as it can on Redis:
//     two holders may then run at once for a lease. Synchronous
//     replication, or Guard in the same database as the data, avoids it.
//   - LISTEN needs a session connection. Behind a transaction pooler
//     (PgBouncer in transaction mode) give the store a pool that connects
//     to Postgres directly, or to a session-mode pool: the waiters' wake-ups
//     go through one connection per Locker, opened as the pool opens its
//     own (its hooks), or taken out of the pool when none can be opened,
//     and held for as long as it has waiters. Without one
//     waiters still get the lock, by polling, from their first wait on.
//   - Any default_transaction_isolation works: the functions need READ
//     COMMITTED, and once a statement fails as a serialization failure the
//     store sends each inside a READ COMMITTED transaction, in one round
//     trip.
//   - The locks table holds a row per key in use, and a release with
//     nobody waiting deletes its row. Rows of holders that died, of
//     cancelled acquires and of lines nobody came back to are deleted once
//     they lapse, and records once their retention ends: a release sweeps
//     up to 500 of each once a minute per Store (WithSweep), and again at
//     the next release while a sweep finds a full limit, so the tables stay
//     bounded by what is live without a job of their own. The fence
//     sequence is one bigint for every key.
//   - Hostile and huge keys never reach SQL as text: the Locker hashes
//     them, and everything the store sends is a parameter. A key the text
//     column cannot take (a prefix with NUL or bytes that are not UTF-8,
//     or over 512 bytes) is stored as a fixed-size digest.
//   - Postgres down or restarted: calls fail within their context's
//     deadline (core.ErrUnavailable, 503 over HTTP); the pool dials anew
//     when it is back, the listening connection reconnects by itself, and
//     fences keep growing. A closed pool is core.ErrStoreClosed.
package pgstore
