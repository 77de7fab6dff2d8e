package store

import (
	"context"
	"time"
)

// Store is where locks live; a Locker adds keys, tokens, waiting and
// renewal on top.
//
// Every method is one attempt: no waiting, no retries beyond what the
// connection itself does. A store answers "someone else holds it" with a
// *NotObtainedError and "this lock is not yours" with ErrNotHeld; anything
// else it returns is a failure of the store.
type Store interface {
	// Acquire takes the lock if it is free and returns a fence that is
	// strictly greater than any fence handed out for the key before.
	Acquire(ctx context.Context, lease Lease) (Grant, error)
	// Extend renews each lease whose token still holds its key, batched into
	// as few round trips as the store allows. The result has one entry per
	// lease, in order.
	Extend(ctx context.Context, leases []Lease) []Renewal
	// Release deletes the lock if token still holds it.
	Release(ctx context.Context, key, token string) error
	// TTL returns the remaining lease of the lock that token holds.
	TTL(ctx context.Context, key, token string) (time.Duration, error)
}

// Lease names a lock in a store: its key, the holder's token and the lease.
type Lease struct {
	// Key is the namespaced key the Locker built, ending in a {hash tag}; a
	// store may derive more keys from it by appending to it, and those share
	// its Redis Cluster slot.
	Key string
	// Token is the holder's random secret; only it can extend or release.
	// It may end in '.' and the Locker's holder label (WithHolder): a store
	// keeps and compares it whole.
	// A token serves one acquire: once an attempt with it was cancelled
	// (Canceler), it takes nothing for a while.
	Token string
	// TTL is the lease, in whole milliseconds.
	TTL time.Duration
	// Mark, when its Retention is not 0, asks an acquire that looks for
	// the key's record to mark the run too (see AcquireMarker). A store
	// that does not implement AcquireMarker never sees it set.
	Mark RunMark
}

// Grant is a successful Acquire.
type Grant struct {
	// Fence is strictly increasing per key across holders.
	Fence uint64
	// Validity is how long, from the moment Acquire was called, the holder
	// may rely on the lock by its own clock.
	Validity time.Duration
	// InDoubt is MarkRun's answer, for an acquire that marked the run as
	// it took the lock (Lease.Mark, AcquireMarker).
	InDoubt bool
}

// Renewal is the outcome of extending one lease.
type Renewal struct {
	// Validity counts from the moment Extend was called, as in Grant.
	Validity time.Duration
	// Err is nil, ErrNotHeld, or a failure of the store.
	Err error
}

// Canceler is implemented by stores whose Acquire can reach the store after
// its caller stopped waiting for the answer (a network store: the command
// may sit in a socket buffer, or behind a slow link, for as long as the
// network likes). The Locker cancels every acquire whose outcome it does not
// know: a plain Release would find nothing if the acquire has not landed
// yet, and the acquire would then take the lock for nobody, for a whole
// lease. Stores that cannot be reached late need not implement it; Release
// is used for them.
type Canceler interface {
	// Cancel deletes the lock if l.Token holds it, and makes sure that an
	// Acquire of l still on its way takes nothing when it lands.
	Cancel(ctx context.Context, l Lease) error
}

// Drift is the safety margin a store takes off every validity: the store's
// clock may run a little faster than the holder's, and the answer took a
// moment to reach it.
func Drift(ttl time.Duration) time.Duration { return ttl/100 + 2*time.Millisecond }

// Validity is how long a holder may rely on a lease of ttl granted by a
// store with one clock: the lease less Drift, so that a lost lock is
// declared lost before the store can hand it to someone else even if the
// holder's timer fires a little late or the store's clock runs a little
// fast.
func Validity(ttl time.Duration) time.Duration {
	return ttl.Truncate(time.Millisecond) - Drift(ttl)
}
