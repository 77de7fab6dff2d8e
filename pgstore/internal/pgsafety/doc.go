// Package pgsafety measures the PostgreSQL store's safety claims, the
// Postgres rows of the safety suite (the root module's internal/safety,
// whose checkers it reuses).
//
// Workers (goroutines with a Locker each, and a worker process that can be
// stopped for real) take the lock and run a read-modify-write of one
// account row in a transaction of their own, with Guard (the guarded
// column) or without it (the unguarded column, to show that the fault is
// real). Each committed write leaves a ledger row, numbered in the order
// the account row took the writes: the ledger is the account's log, and
// internal/safety's CheckStaleWrites and CheckLostUpdates read it.
//
// The faults: Postgres killed with -9 and restarted; a holder process
// stopped (SIGSTOP) past its lease; Postgres itself stopped past the
// lease; every statement delayed on its way through the fault proxy. The
// guarded column must show 0 stale writes committed.
package pgsafety
