// Package storetest is the store contract of package core as a test suite.
// A store, in this repository or outside it, proves it keeps the contract
// by running the suite from its own test:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Harness{
//			New: func(t testing.TB) core.Store { return mystore.New(client(t)) },
//		})
//	}
//
// Run checks each promise as a subtest named "group/promise" (Promises
// lists them), so a failure names the promise broken. It reads which
// optional interfaces the store implements (store.Canceler, store.Recorder,
// store.RunMarker, store.AcquireMarker, store.UnitRecorder, store.Waker, store.Granter, store.Inspector,
// store.LapseTeller, store.Kinder, store.Semaphores, store.PermitLines;
// Offers lists them) and checks those too; a promise of an interface the
// store does not implement is skipped with a message that says so.
//
// # The promises
//
//   - exclusion: one holder at a time, at the store (goroutines racing
//     Acquire and Release) and through Lockers (Do); keys are independent.
//   - fences: strictly greater for each holder of a key, after a release,
//     after a lease ran out, and under contention.
//   - stale: a holder whose lease ran out, a token that never held the key,
//     or a second Release, get ErrNotHeld and leave the newer holder its
//     lock (Release, Extend, TTL; and through a Locker).
//   - lease: Grant.Validity and Renewal.Validity are within (0, TTL less
//     store.Drift(TTL)], a margin for a holder's late timer; a
//     taken key says how long its holder's lease runs; a lease not renewed
//     runs out, never before the holder's validity ends; Extend renews, and
//     answers a batch in order.
//   - records (Recorder): the holder's ReleaseRecording writes the record
//     and frees the key, a token that does not hold the lock writes
//     nothing, an empty record is a non-nil record, a record lasts its
//     retention and then goes (within a slack of the suite's short lease),
//     a waiter asking for the record gets it, and
//     a Locker's Once runs its function once.
//   - runs (RunMarker): a run that lost its lock without a record or a
//     clean end leaves its mark, and every next holder is told it is in
//     doubt until one runs again; a clean end, a record (of the same
//     retention), ForgetRun or the mark's retention clears it; only the
//     holder marks or clears; through a Locker, Once refuses
//     (RefuseInDoubt) or runs again saying so (RunAgain), and its error on
//     a lost lock is ErrLockLost and the function's own, on one line.
//   - acquire-marks (AcquireMarker, when MarksOnAcquire): an acquire
//     that looks for the record and takes the lock marks the run as
//     MarkRun would and says whether the run before is in doubt, in a
//     claim from the line too; without again a mark in doubt stays as it
//     is, with again its retention starts over; a copy of the acquire
//     finds its own mark; finding the key taken or its record marks
//     nothing; Cancel, a waiter's Leave, and through a Locker a release
//     before the run started, take back the acquire's own mark; Once
//     makes no MarkRun round trip; with the Slow hook, a marking acquire
//     that lands after the Locker's cancel marks nothing.
//   - units (UnitRecorder, when RecordsInUnit): a unit begins only for the
//     holder with its fence; its record commits with the release; while it
//     is open nobody takes the key, even past the lease, and a unit whose
//     lease ran out commits nothing; no record or a panic rolls it back.
//   - lines (Waker): waiters are handed the lock in the turn they joined,
//     with growing fences; one that leaves passes its turn on; one that
//     never claims holds the key up for HandOffBound at most; a release
//     wakes the head of the line through its subscription; through
//     Lockers, the same order, and a release wakes a waiter of the same
//     Locker whose backoff would sleep a minute.
//   - cancel (Canceler): an acquire cancelled before it lands takes
//     nothing, and a queued one does not rejoin the line the waiter left;
//     a cancel frees a lock that did land; with the Slow hook, an
//     acquire (and one that asks for the record) whose caller gave up while
//     its bytes were held lands after the Locker's cancel and takes nothing.
//   - inspect (Inspector): a free key, a held one (the holder's label, never
//     its token), the line, a hand-off; and Inspect changes nothing.
//   - contract: a Granter's hand-off carries a fence above what the waiter
//     was last told and is held under core's HandedOverToken, and lasts
//     store.HandOffTimeout however soon another caller tries the key (a
//     waiter's Locker runs under it that long without asking); a store
//     that tells lapses tells a lapsed holder before the next acquire
//     returns, whether the holder took the key with Acquire, AcquireQueued
//     or AcquireOrRecord, and tells a live holder nothing;
//     Kind is a short lower-case name; with the Close hook, the calls a
//     Locker retries after a closed client wrap core.ErrStoreClosed.
//   - semaphore (Semaphores), each with N = 1, 2 and 5: never more than N
//     permits of a key, at the store and through Semaphores of several
//     Lockers; a full key says how long its first permit may still be
//     held; fences strictly increase across permits; a released or
//     expired permit, or a token that never held one, is refused release,
//     extend and TTL; expired permits free their places on their own and
//     a renewed one stays; the waiters of a Semaphore are admitted in the
//     order they came, one per permit given back, and so are those of
//     several Lockers on a store with PermitLines, woken by releases,
//     and twice as many waiters as permits on two Lockers all take their
//     turns, none starved and never more than N at once; both again with
//     the waiters on two stores New returned, when those share their data
//     (two clients of one server: two instances);
//     InspectPermits lists every holder in the order granted; the limit
//     is each call's own (limit 2 refused while two are held, limit 5
//     admitted); a key's permits and its lock never meet; with the Slow hook, a permit
//     acquire whose caller gave up takes nothing when it lands.
//
// Every wait in the suite is bounded only to fail a hang; no assertion is
// about speed. The bounds (and the leases) scale with Harness.MinTTL. The
// promises with a bound on both sides (a hand-off's length, a record's
// retention) fail a store only on timings that prove it broken however
// slow the machine: a hand-off is measured again when a sample proves
// nothing either way.
//
// # The harness
//
// New is the only field required. It returns a store for one test: a fresh
// one, or the same shared one, since the suite's keys are its own (a
// random part under Prefix). The optional fields:
//
//   - Prefix: the namespace every key the suite uses starts with.
//   - MinTTL: the shortest lease the store honours exactly; a store with
//     whole-second leases says so, and the suite's leases and waits grow.
//   - HandOffBound: how long a lock handed to a waiter that never claims
//     it keeps the key, if not store.HandOffTimeout (never less, on a
//     Granter: its Lockers trust a hand-off that long).
//   - Slow: a store whose next command for a key the test can hold on its
//     way and let land later: through core/storetest/faultproxy, a
//     loopback TCP proxy any store's tests can import. It proves the
//     late-landing promises.
//   - Writes: how many writes the store's backend has taken, to prove
//     Inspect writes nothing.
//   - Close: closes the store's client, to check core.ErrStoreClosed.
//   - Waive: the promises the store does not make, each with its reason
//     (a Redlock store's fences only almost always grow, and its releases
//     hand the lock to nobody). A waiver that names no promise fails.
//
// # Without a hook
//
// A store that gives no Slow hook but can be reached late (any network
// store: it should implement store.Canceler) must show in its own tests
// that an acquire whose caller gave up, delivered over its real link after
// the Locker's Cancel, takes nothing, and so does one that asks for the
// record: the suite's own cancel checks call Cancel before the acquire,
// which proves the marker, not the link. A store without Writes must show
// some other way that Inspect neither extends a lease, advances a fence
// nor touches a line, and a store without Close that its client's closing
// is ErrStoreClosed.
package storetest
