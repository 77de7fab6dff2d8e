// Package core is reqlock's distributed lock: at most one holder per key
// across every process that shares a Store.
//
// A Locker hands out locks from one Store. The protocol is the classic one,
// done carefully:
//
//   - acquire takes the key with a random 128-bit token and hands out a
//     fencing token; when someone else holds it, the error says how long
//     their lease still runs (ErrNotObtained, HolderTTL);
//   - release and extend compare the token first, so nobody frees or
//     extends a lock that is not theirs (ErrNotHeld);
//   - Obtain waits with a randomized backoff (package backoff), never past
//     the holder's lease. On a store that keeps lines of waiters (Waker),
//     waiters are served in turn across instances and a release wakes the
//     next at once; on any other store they poll;
//   - a watchdog renews every held lock at about a third of its lease, all
//     in one batch per tick; when it cannot, the lock is lost: Lost() closes
//     and the context from Do is cancelled with cause ErrLockLost;
//   - Fence grows strictly per key across holders. Only a resource that
//     checks fences is safe from a holder that paused past its lease; pass
//     Fence along.
//
// Once and the record calls (TryObtainOrRecord, Lock.ReleaseRecording) run
// a function once per key within a retention, on a store that keeps records
// (Recorder): later callers get the recorded result. Exactly once when the
// store runs the function in a unit that commits with the record
// (UnitRecorder: pgstore.WithTx); elsewhere a run that lost its lock
// before its record is in doubt, and the next caller is told (ErrInDoubt,
// Outcome.InDoubt, WithDoubtPolicy).
//
// Lead runs a function on one instance at a time, campaigning for a key
// until its context ends: leadership is the key's lock, held while the
// function runs, and the lock's fence is the term. An Elector answers "do
// I lead now?" for code that asks before each piece of work (it is a
// gocron v2 Elector; package gocronlock, a module of its own, has the
// scheduler wiring).
//
// Keys are hashed: the store sees prefix + "{" + base64(SHA-256(key)[:16]) + "}",
// never the raw key, so user text can neither escape the namespace nor choose
// a Redis Cluster slot.
//
// Locker.Inspect says who holds a key, for how long, its last fence and how
// many wait for it, without changing anything; WithHolder names the instance
// in that answer. The reqlock command (cmd/reqlock) asks the same from a
// shell.
//
// # Stores
//
// A Locker is built on a Store. The stores are packages of their own:
//
//	memorystore          one process: memorystore.New()
//	redisstore           Redis: one server, Cluster, Sentinel: redisstore.New(rdb)
//	redisstore/redlock   several independent Redis masters: redlock.New(a, b, c)
//	pgstore              PostgreSQL (a module of its own): pgstore.New(pool)
//	etcdstore            etcd (a module of its own): etcdstore.New(cli)
//
// # What core exports
//
// core exports what a user of the lock needs: the Locker and its options,
// Lock, Once and the record calls, Inspect, the telemetry options, and the
// errors its calls return. Of the store contract it names only Store (what
// NewLocker takes), Holding (what Inspect returns) and the sentinel errors
// ErrNotObtained, ErrNotHeld, ErrStoreClosed, ErrNoInspect and ErrNoRecords,
// which are the values of package core/store, so errors.Is matches either.
// A store author imports core/store, which has everything else (Lease,
// Grant, the optional Canceler, Recorder, Waker, Granter, Inspector, …), and
// runs core/storetest, the conformance suite every store passes.
package core
