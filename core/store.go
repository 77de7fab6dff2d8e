package core

import (
	"context"
	"errors"
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
	// It may end in '.' and the Locker's holder label (WithHolder): a store
	// keeps and compares it whole.
	// A token serves one acquire: once an attempt with it was cancelled
	// (Canceler), it takes nothing for a while.
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

// cancel undoes an acquire of l whose outcome is unknown: Cancel where the
// store has it, else Release. ErrNotHeld (nothing was there) is success.
func cancel(ctx context.Context, s Store, l Lease) error {
	var err error
	if c, ok := s.(Canceler); ok {
		err = c.Cancel(ctx, l)
	} else {
		err = s.Release(ctx, l.Key, l.Token)
	}
	if errors.Is(err, ErrNotHeld) {
		return nil
	}
	return err
}

// detachedReleaseTimeout bounds a release made on a context cut loose from
// the caller's: never past the lease, after which there is nothing left to
// release, and never long.
func detachedReleaseTimeout(ttl time.Duration) time.Duration { return min(ttl, 3*time.Second) }

// giveBack undoes an acquire of l that may have taken the lock but cannot
// hand it out, on a context of its own (the caller's may be what ran out,
// which is why) and bounded. It cancels rather than releases: a part of the
// acquire (a Redlock node's) may still be on its way.
func giveBack(ctx context.Context, s Store, l Lease) {
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), detachedReleaseTimeout(l.TTL))
	defer stop()
	_ = cancel(ctx, s, l)
}
