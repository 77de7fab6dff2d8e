package core

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core/store"
)

// undoRetry paces the background retries of a release or a cancel whose
// outcome was unknown: soon at first, for a blip, then no more than once a
// second against a store that is down.
var undoRetry = backoff.Exponential(20*time.Millisecond, time.Second)

// undo runs op in the background until it succeeds, op answers ErrNotHeld
// (nothing left to undo), the client is closed, or until has passed: past
// the lease there is nothing left to free. Each try is bounded like any detached release.
// The goroutine keeps ctx's values, not its cancellation. what names op in
// the warning logged if it gives up: the key of skey stayed taken until
// its lease ran out.
func (l *Locker) undo(ctx context.Context, until time.Time, skey string, what undoKind, op func(context.Context) error) {
	ctx = context.WithoutCancel(ctx)
	go func() {
		b := undoRetry()
		timer := time.NewTimer(0)
		defer timer.Stop()
		var err error
		defer func() {
			if err != nil {
				// A store outage makes every undo of it give up alike:
				// one line per burst, with the count of the rest.
				l.warnings.Log(l.log, slog.LevelWarn, "reqlock: background undo gave up", what,
					logStoreKey, skey, attrReason, string(what), attrError, err)
			}
		}()
		for {
			left := time.Until(until)
			if left <= 0 {
				return
			}
			<-timer.C
			tctx, stop := context.WithTimeout(ctx, min(l.releaseTimeout(), left))
			err = op(tctx)
			stop()
			// A closed client can never succeed: its owner is shutting down.
			if err == nil || errors.Is(err, ErrNotHeld) || errors.Is(err, ErrStoreClosed) {
				err = nil
				return
			}
			d := b.NextBackOff()
			left = time.Until(until)
			if d < 0 || left <= 0 {
				return
			}
			timer.Reset(min(d, left))
		}
	}()
}

// undoKind names what a background undo retries, as the reqlock.reason of
// its warning.
type undoKind string

const (
	undoRelease          undoKind = "release"           // a release whose outcome was unknown
	undoReleaseRecording undoKind = "release_recording" // the same, writing a record
	undoCancelAcquire    undoKind = "cancel_acquire"    // an acquire whose outcome was unknown
	undoLateExtend       undoKind = "late_extend"       // an extend that landed after the lock was lost
	undoLeaveLine        undoKind = "leave_line"        // a waiter that gave up, leaving its key's line
)

// retryRelease keeps trying, in the background, a release whose outcome is
// unknown, until the lease that ends at until. The first try goes at once:
// the failed one may have been cut short by its caller's context.
func (l *Locker) retryRelease(ctx context.Context, skey, token string, until time.Time) {
	l.undo(ctx, until, skey, undoRelease, func(ctx context.Context) error {
		err := l.store.Release(ctx, skey, token)
		if err == nil {
			l.wakeLocal(skey)
		}
		return err
	})
}

// abandon undoes, in the background, an acquire whose outcome is unknown
// (a timeout, a cancelled caller): the lock its token may hold now, and,
// where the store can tell (Canceler), the lock it would take if the
// command is still on its way. The token is ours alone, so this can never
// free someone else's lock. It is retried for a lease from when the attempt
// started; a store unreachable for all that time, whose acquire then lands
// after all, keeps the key for one lease.
func (l *Locker) abandon(ctx context.Context, lease store.Lease, start time.Time) {
	l.undo(ctx, start.Add(lease.TTL), lease.Key, undoCancelAcquire, func(ctx context.Context) error {
		return cancel(ctx, l.store, lease)
	})
}

// extendedTooLate gives back what an extension of lk did in the store when
// lk was lost or released while the extension was on its way: nobody
// renews the lock any more, and nobody should wait for it.
func (l *Locker) extendedTooLate(lk *Lock) {
	if !lk.isLost() {
		return // released: its own release deletes it, or retries
	}
	l.undo(context.Background(), time.Now().Add(lk.ttl), lk.skey, undoLateExtend, func(ctx context.Context) error {
		return l.store.Release(ctx, lk.skey, lk.token)
	})
}
