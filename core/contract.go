package core

import (
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// The store contract lives in package core/store, so that a store imports
// it without importing core; these names are the same types and values.
// See package store for what each promises.
type (
	// Store is where locks live; see store.Store.
	Store = store.Store
	// Lease names a lock in a store; see store.Lease.
	Lease = store.Lease
	// Grant is a successful Acquire; see store.Grant.
	Grant = store.Grant
	// Renewal is the outcome of extending one lease; see store.Renewal.
	Renewal = store.Renewal
	// Canceler undoes an acquire of unknown outcome; see store.Canceler.
	Canceler = store.Canceler
	// Recorder keeps records for replay; see store.Recorder.
	Recorder = store.Recorder
	// Durability says whether records survive a restart; see
	// store.Durability.
	Durability = store.Durability
	// Waker serves waiters in line across instances; see store.Waker.
	Waker = store.Waker
	// Granter hands a released lock to the head of the line; see
	// store.Granter.
	Granter = store.Granter
	// Subscription is one Locker's line to its store's releases; see
	// store.Subscription.
	Subscription = store.Subscription
	// Inspector reads who holds a key; see store.Inspector.
	Inspector = store.Inspector
	// Holding is what Inspect says of a key; see store.Holding.
	Holding = store.Holding
	// LapseNotice tells a holder in-process that its lease lapsed; see
	// store.LapseNotice.
	LapseNotice = store.LapseNotice
	// LapseTeller says whether a store tells lapses; see store.LapseTeller.
	LapseTeller = store.LapseTeller
	// Kinder names a store's kind for telemetry; see store.Kinder.
	Kinder = store.Kinder
	// Listener is a subscription that hears releases already; see
	// store.Listener.
	Listener = store.Listener
	// NotObtainedError is the error for a lock someone else holds; see
	// store.NotObtainedError.
	NotObtainedError = store.NotObtainedError
)

var (
	// ErrNotObtained means someone else holds the lock. The error is a
	// *NotObtainedError, which says how long the holder's lease still runs.
	ErrNotObtained = store.ErrNotObtained
	// ErrNotHeld is what Refresh, Release and TTL return for a lock that is
	// no longer ours: released already, expired, or taken by someone else
	// since.
	ErrNotHeld = store.ErrNotHeld
	// ErrStoreClosed is wrapped by a store's error when its client was
	// closed.
	ErrStoreClosed = store.ErrStoreClosed
	// ErrNoInspect is returned by Locker.Inspect when the Locker's store
	// does not implement Inspector.
	ErrNoInspect = store.ErrNoInspect
	// ErrNoRecords is returned by the record calls of a Locker whose store
	// cannot keep records.
	ErrNoRecords = store.ErrNoRecords
)

const (
	// HandOffTimeout is how long a lock that a release handed to the next
	// waiter in line is its own before the waiter renews it; see
	// store.HandOffTimeout.
	HandOffTimeout = store.HandOffTimeout
	// WakeAll is the waiter that stands for every waiter; see
	// store.WakeAll.
	WakeAll = store.WakeAll
)

// validity, drift and handedOverToken are the contract's, under the names
// core's files use.
func validity(ttl time.Duration) time.Duration { return store.Validity(ttl) }
func drift(ttl time.Duration) time.Duration    { return store.Drift(ttl) }
func handedOverToken(waiter string) string     { return store.HandedOverToken(waiter) }
func holderOf(value string) string             { return store.HolderOf(value) }

const holderSep = store.HolderSep
