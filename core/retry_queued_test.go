package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// The policy is the schedule of every Obtain, also of one queued behind
// other callers of the same Locker for the same key: under
// Limit(Constant(interval), 2) on a key held for an hour, each of several
// concurrent callers gives up after its own two waits, not after the
// waits of everyone ahead of it in the Locker's queue.
func TestRetryLimitBoundsQueuedCallers(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	s := memorystore.New()
	held, err := newLocker(s).TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)

	const (
		callers  = 6
		interval = 40 * time.Millisecond
		// Two waits of at most 1.5 × interval, with a generous margin for a
		// loaded machine; well below the callers' waits added up.
		within = 2*interval*3/2 + 150*time.Millisecond
	)
	waiter := newLocker(s, core.WithRetry(backoff.Limit(backoff.Constant(interval), 2)))
	took := make([]time.Duration, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			start := time.Now()
			_, errs[i] = waiter.Obtain(context.WithoutCancel(ctx), "k")
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	for i := range callers {
		if !errors.Is(errs[i], core.ErrNotObtained) {
			t.Fatalf("caller %d: %v, want ErrNotObtained", i, errs[i])
		}
		if took[i] > within {
			t.Fatalf("a caller gave up after %v, want within %v (two waits of %v ±50%%); all: %v", took[i], within, interval, took)
		}
	}
}
