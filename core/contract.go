package core

import (
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// The store contract lives in package core/store, so that a store imports
// it without importing core. A user of the lock needs only these of its
// names, and core gives them here: the Store a Locker is built on, the
// Holding that Inspect returns, and the errors its calls return (the same
// values, so errors.Is matches either name). Everything else a store author
// needs is in package store alone.
type (
	// Store is where locks live; see store.Store.
	Store = store.Store
	// Holding is what Inspect says of a key; see store.Holding.
	Holding = store.Holding
)

var (
	// ErrNotObtained means someone else holds the lock. HolderTTL says how
	// long the holder's lease still runs.
	ErrNotObtained = store.ErrNotObtained
	// ErrNotHeld is what Refresh, Release and TTL return for a lock that is
	// no longer ours: released already, expired, or taken by someone else
	// since.
	ErrNotHeld = store.ErrNotHeld
	// ErrStoreClosed is wrapped by a store's error when its client was
	// closed.
	ErrStoreClosed = store.ErrStoreClosed
	// ErrNoInspect is returned by Locker.Inspect when the Locker's store
	// does not implement store.Inspector.
	ErrNoInspect = store.ErrNoInspect
	// ErrNoRecords is returned by the record calls of a Locker whose store
	// cannot keep records.
	ErrNoRecords = store.ErrNoRecords
)

// validity, drift and handedOverToken are the contract's, under the names
// core's files use.
func validity(ttl time.Duration) time.Duration { return store.Validity(ttl) }
func drift(ttl time.Duration) time.Duration    { return store.Drift(ttl) }
func handedOverToken(waiter string) string     { return store.HandedOverToken(waiter) }
func holderOf(value string) string             { return store.HolderOf(value) }

const holderSep = store.HolderSep
