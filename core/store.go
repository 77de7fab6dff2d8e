package core

import (
	"context"
	"errors"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// cancel undoes an acquire of l whose outcome is unknown: Cancel where the
// store has it, else Release. ErrNotHeld (nothing was there) is success.
func cancel(ctx context.Context, s Store, l store.Lease) error {
	var err error
	if c, ok := s.(store.Canceler); ok {
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
func giveBack(ctx context.Context, s Store, l store.Lease) {
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), detachedReleaseTimeout(l.TTL))
	defer stop()
	_ = cancel(ctx, s, l)
}
