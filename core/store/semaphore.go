package store

import (
	"context"
	"errors"
	"time"
)

// Semaphores is implemented by stores that keep permits: up to a limit of
// holders per key at once, each under its own token and lease, as a lock
// is held by one. A Locker's Semaphore runs on it; the permits of a key are
// kept apart from the key's lock, so that a lock and a semaphore of one
// name never meet.
//
// The limit comes with each acquire, not with the key: an acquire with
// limit n is granted only while fewer than n live permits of the key are
// held, whoever holds them and whatever limit they came with. So callers
// with different limits on one key each see at most their own limit at the
// moment they are admitted, and the key never has more holders than the
// largest limit in use.
//
// Every method is one attempt, as for Store; a permit whose lease ran out
// is no longer held, and frees its place without anyone releasing it.
type Semaphores interface {
	// AcquirePermit takes a permit of l.Key for l.Token if fewer than limit
	// live permits are held, with a fence strictly greater than any fence
	// handed out for the key's permits before. A full key answers a
	// *NotObtainedError whose Remaining is the shortest lease left among
	// the holders: the earliest a place may free up if nobody releases.
	// An acquire that finds its own token's permit (a resent copy) is
	// granted that permit again, with its fence.
	AcquirePermit(ctx context.Context, l Lease, limit int) (Grant, error)
	// ExtendPermits renews each lease whose token still holds a live permit
	// of its key, as Store.Extend does for locks.
	ExtendPermits(ctx context.Context, leases []Lease) []Renewal
	// ReleasePermit gives token's permit of key back; ErrNotHeld if token
	// holds no live permit of key.
	ReleasePermit(ctx context.Context, key, token string) error
	// PermitTTL returns the remaining lease of token's permit of key.
	PermitTTL(ctx context.Context, key, token string) (time.Duration, error)
	// CancelPermit gives l.Token's permit back if it holds one, and, on a
	// store that can be reached late (see Canceler), makes sure that an
	// AcquirePermit of l still on its way takes nothing when it lands.
	// ErrNotHeld when nothing was held.
	CancelPermit(ctx context.Context, l Lease) error
	// InspectPermits lists the live permits of key, the namespaced key a
	// Locker builds, without changing anything: one Holding per holder,
	// Held set, with its remaining lease, fence and holder label, in the
	// order they were granted. StoreKey is left for the Locker to fill.
	InspectPermits(ctx context.Context, key string) ([]Holding, error)
}

// MaxLimit is the largest limit a Semaphore takes: a store lists and counts
// a key's permits in one step, so their number stays small.
const MaxLimit = 1 << 16

// ErrSemaphoreUnsupported is returned by every call of a Semaphore whose
// Locker's store does not implement Semaphores. redlock.Store does not:
// with N ≥ 2 permits a majority of its masters no longer keeps N (with
// N = 2 and five masters, three holders can each win three masters), and
// the quorum that would, more than M·N/(N+1) of M masters, is four of five
// for N = 2 and all five from N = 4 on: one or two masters down would stop
// every permit of every key.
var ErrSemaphoreUnsupported = errors.New("reqlock: the store keeps no semaphores (it does not implement store.Semaphores; redlock.Store does not, see docs/semaphore.md)")

// PermitLineKeep is how long a waiter in a permit line keeps its place
// without asking. A Semaphore's waiter asks at least every half of it while
// it waits, whatever its retry policy, so a waiter whose process died holds
// up no place for longer; a store drops a waiter that has not asked for
// PermitLineKeep (it may keep it longer, never shorter).
const PermitLineKeep = 2 * time.Second

// PermitLines is implemented by Semaphores stores that keep a line of
// waiters for a key's permits across instances, as Waker does for locks: a
// caller outside the line is admitted only while the places left outnumber
// the waiters, and a waiter only while fewer waiters stand ahead of it than
// places are left; a release wakes the head of the line through its
// Locker's subscription. Every store of this module implements it:
// memorystore, redisstore, pgstore and etcdstore.
type PermitLines interface {
	// AcquirePermitQueued is AcquirePermit for waiter ('<instance>/<wait>',
	// as for Waker): refused, it joins the key's line, once, and keeps its
	// place while it asks again within PermitLineKeep.
	AcquirePermitQueued(ctx context.Context, l Lease, limit int, waiter string) (Grant, error)
	// LeavePermitLine takes waiter out of the key's line.
	LeavePermitLine(ctx context.Context, key, waiter string) error
	// SubscribePermits opens the subscription of one instance to the
	// releases of permits that concern its waiters, as Waker.Subscribe.
	SubscribePermits(prefix, instance string, wake func(key, waiter string)) Subscription
}
