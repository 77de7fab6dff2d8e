package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// A run cut short by its caller's context (a client that left, a
// deadline) while its call to a payment API was in flight is as much in
// doubt as one cut short by a lost lock: fn returns the context's error
// either way, and the payment may have gone through. It must not count as
// a clean failure that clears the mark, or the next caller, refusing runs
// in doubt, pays again.
func TestOnceCancelledMidRunIsInDoubt(t *testing.T) {
	m := memorystore.New()
	l := core.NewLocker(m, core.WithLogger(quiet), core.WithDoubtPolicy(core.RefuseInDoubt))
	ctx, cancel := context.WithCancel(context.Background())
	_, err := l.Once(ctx, "pay-1", time.Hour, func(ctx context.Context) ([]byte, error) {
		cancel() // the caller leaves while the payment is on its way
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the cut-short run: %v", err)
	}
	ran := false
	out, err := l.Once(context.Background(), "pay-1", time.Hour, func(context.Context) ([]byte, error) {
		ran = true
		return []byte("paid"), nil
	})
	if !errors.Is(err, core.ErrInDoubt) || ran {
		t.Fatalf("Once after a run cut short mid-call: %+v, %v, ran %v; want ErrInDoubt", out, err, ran)
	}
}
