package snippets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/reqlock/reqlock/core"
)

// charge stands in for the protected work: it passes the fence on, so that
// the resource it writes to can refuse a holder that paused past its lease.
func charge(ctx context.Context, orderID string, fence uint64) error {
	return ctx.Err()
}

// Do is the README's "The lock without HTTP" section.
func Do(ctx context.Context, locker *core.Locker, orderID string) error {
	err := locker.Do(ctx, "order:"+orderID, func(ctx context.Context) error {
		lk, _ := core.FromContext(ctx)
		return charge(ctx, orderID, lk.Fence()) // ctx ends with cause core.ErrLockLost if the lock is lost
	})
	switch {
	case errors.Is(err, core.ErrNotObtained): // someone else held it until ctx ended
	case errors.Is(err, core.ErrUnavailable): // the store did not answer in time
	}
	return err
}

// Once is docs/core.md's "At most once per key" section: a queue consumer
// that must not run a job twice, on any instance.
func Once(ctx context.Context, locker *core.Locker, jobID string) error {
	out, err := locker.Once(ctx, "job:"+jobID, 0, func(ctx context.Context) ([]byte, error) {
		receipt, err := sendInvoice(ctx, jobID)
		if errors.Is(err, errRefused) {
			return nil, core.Final(err) // an answer, not a failure: recorded, not retried
		}
		return receipt, err // any other error is not recorded: the next caller runs fn again
	})
	if out.Replayed {
		slog.InfoContext(ctx, "invoice already sent", "job", jobID)
	}
	return err
}

var errRefused = errors.New("invoice refused")

func sendInvoice(ctx context.Context, jobID string) ([]byte, error) {
	return fmt.Appendf(nil, "receipt for %s", jobID), ctx.Err()
}

// TryObtain is docs/core.md's hand-held lock: one attempt, and the holder's
// remaining lease when it is taken.
func TryObtain(ctx context.Context, locker *core.Locker, key string) error {
	lk, err := locker.TryObtain(ctx, key)
	if errors.Is(err, core.ErrNotObtained) {
		left, _ := core.HolderTTL(err) // how long the holder's lease still runs
		return fmt.Errorf("busy for up to %v: %w", left, err)
	}
	if err != nil {
		return err
	}
	defer lk.Release(context.WithoutCancel(ctx)) // release even when ctx is cancelled
	return charge(ctx, key, lk.Fence())
}
