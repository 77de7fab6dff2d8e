package core

import (
	"context"
	"time"
)

// Store is where locks live. RedisStore (one Redis, Cluster or Sentinel),
// RedlockStore (several independent masters) and MemoryStore (one process)
// implement it; a Locker adds keys, tokens, waiting and renewal on top.
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
	Token string
	// TTL is the lease, in whole milliseconds.
	TTL time.Duration
}

// Grant is a successful Acquire.
type Grant struct {
	// Fence is strictly increasing per key across holders.
	Fence uint64
	// Validity is how long, from the moment Acquire was called, the holder
	// may rely on the lock by its own clock.
	Validity time.Duration
}

// Renewal is the outcome of extending one lease.
type Renewal struct {
	// Validity counts from the moment Extend was called, as in Grant.
	Validity time.Duration
	// Err is nil, ErrNotHeld, or a failure of the store.
	Err error
}

// detachedReleaseTimeout bounds a release made on a context cut loose from
// the caller's: never past the lease, after which there is nothing left to
// release, and never long.
func detachedReleaseTimeout(ttl time.Duration) time.Duration { return min(ttl, 3*time.Second) }

// giveBack releases a lease that an acquire took but cannot hand out, on a
// context of its own (the caller's may be what ran out, which is why) and
// bounded.
func giveBack(ctx context.Context, s Store, l Lease) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), detachedReleaseTimeout(l.TTL))
	defer cancel()
	_ = s.Release(ctx, l.Key, l.Token)
}
