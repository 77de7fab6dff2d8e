package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// A run that went ahead over a run in doubt (RunAgain) and then failed
// cleanly settled nothing: whether the lost run's effect landed is as
// unknown as before. The doubt must stay for the next caller: a refusing
// one is refused, not let run as if nothing had happened.
func TestOnceCleanFailureAfterDoubtKeepsTheDoubt(t *testing.T) {
	ctx := context.Background()
	m := memorystore.New()
	lost := core.NewLocker(m, core.WithTTL(50*time.Millisecond), core.WithoutWatchdog(), core.WithLogger(quiet))
	_, err := lost.Once(ctx, "pay-1", time.Hour, func(ctx context.Context) ([]byte, error) {
		<-ctx.Done() // paused past the lease: the lock is lost, the payment maybe made
		return nil, ctx.Err()
	})
	if !errors.Is(err, core.ErrLockLost) {
		t.Fatalf("the lost run: %v", err)
	}

	again := core.NewLocker(m, core.WithLogger(quiet))
	errBusy := errors.New("payment provider busy, try again")
	out, err := again.Once(ctx, "pay-1", time.Hour, func(context.Context) ([]byte, error) { return nil, errBusy })
	if !errors.Is(err, errBusy) || !out.InDoubt {
		t.Fatalf("the run again: %+v, %v; want its own failure, in doubt", out, err)
	}

	refuse := core.NewLocker(m, core.WithDoubtPolicy(core.RefuseInDoubt))
	ran := false
	out, err = refuse.Once(ctx, "pay-1", time.Hour, func(context.Context) ([]byte, error) {
		ran = true
		return []byte("paid"), nil
	})
	if !errors.Is(err, core.ErrInDoubt) || !out.InDoubt || ran {
		t.Fatalf("Once after a lost run and a failed run again: %+v, %v, ran %v; "+
			"want ErrInDoubt: the lost run's outcome is still unknown", out, err, ran)
	}
}
