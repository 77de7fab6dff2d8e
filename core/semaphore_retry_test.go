package core_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

// WithRetry is the schedule of a Semaphore's waiters too, as of the
// Locker's: two waits of 5 ms on a key whose only permit is held for an
// hour end Obtain with ErrNotObtained long before two of the store's
// polling intervals (HandOffTimeout each, at least), which is what the
// waits are raised to when the caller's policy is not taken as the
// schedule. Timers never fire early, so a raised wait cannot pass.
func TestSemaphoreRetryIsTheSchedule(t *testing.T) {
	s := memorystore.New()
	ctx := ctxT(t, 20*time.Second)
	holder, err := newLocker(s, core.WithTTL(time.Hour)).Semaphore(1).TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release(ctx)
	sem := newLocker(s, core.WithRetry(backoff.Limit(backoff.Constant(5*time.Millisecond), 2))).Semaphore(1)
	start := time.Now()
	lk, err := sem.Obtain(ctx, "k")
	took := time.Since(start)
	if lk != nil {
		_ = lk.Release(ctx)
		t.Fatal("Obtain took the permit held for an hour")
	}
	if !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("Obtain: %v, want ErrNotObtained", err)
	}
	if took >= 2*store.HandOffTimeout {
		t.Fatalf("Obtain gave up after %v: two waits of 5 ms were asked for, and were raised to the store's polling interval (%v)", took, store.HandOffTimeout)
	}
}
