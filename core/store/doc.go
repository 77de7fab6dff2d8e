// Package store is the contract between a core.Locker and the stores its
// locks live in. It is all a store needs to import: the Locker asks nothing
// of a store beyond these interfaces, so a store written outside this
// repository gets every feature it implements. Package core re-exports
// every name here (core.Store, store.Lease, core.ErrNotHeld, …), which is
// how most code refers to them.
//
// A store implements Store, and any of the optional interfaces:
//
//	Store        acquire, batched extend, release, remaining lease   (required)
//	Canceler     undo an acquire that may land after its caller gave up
//	Recorder     records for idempotent replay, written by the holder's release
//	Waker        lines of waiters across instances, woken at release
//	Granter      a release that hands the lock to the head of the line, with its fence
//	Inspector    read who holds a key without changing anything
//	LapseTeller  a store that never tells of a lapsed lease says so (see LapseNotice)
//	Kinder       the store's kind, for telemetry
//	Durability   whether records survive a restart of the store
//
// A store that implements only Store works: waiters then poll with the
// Locker's backoff. A store signals "someone else holds it" with a
// *NotObtainedError, "this lock is not yours" with ErrNotHeld, and a client
// that was closed with an error that wraps ErrStoreClosed; anything else is
// a failure of the store.
//
// The packages, and who imports whom (an arrow reads "imports"):
//
//	core ──► core/store ◄── memorystore, redisstore, redisstore/redlock,
//	                        pgstore (module), etcdstore (module)
//	core/storetest ──► core, core/store: the conformance suite every store runs
//
// No store imports core, except where a store's own API takes a *core.Lock
// (pgstore's and etcdstore's Guard); core imports no store.
package store
