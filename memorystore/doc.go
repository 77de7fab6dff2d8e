// Package memorystore keeps reqlock's locks in this process: the default
// store for examples, tests and single-instance services. Build one with
// New and hand it to core.NewLocker.
//
// It follows the rules of the network stores without the network: random
// tokens compared on every extend and release, leases by the process's
// monotonic clock, a fence that never goes backwards (one counter for all
// keys, never below wall-clock microseconds so that it keeps growing
// across a restart of the process), records for replay with a byte bound, and
// lines of waiters served in turn and handed the lock at release.
//
// Because holder and store share one process, it also tells a holder at
// once when its lease ran out and the key was taken or swept (the
// contract's LapseNotice), before the next caller is granted the key: a
// stalled goroutine's Lost closes first, however late its own timer runs.
//
// It implements every optional part of the contract in package
// core/store except Canceler (nothing it answers can land late).
package memorystore
