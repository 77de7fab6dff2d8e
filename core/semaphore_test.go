package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// A limit below 1 or above store.MaxLimit is a configuration mistake:
// Semaphore panics with an error that says so.
func TestSemaphoreInvalidLimit(t *testing.T) {
	l := newLocker(memorystore.New())
	for _, limit := range []int{0, -1, 1<<16 + 1} {
		func() {
			defer func() {
				err, _ := recover().(error)
				if !errors.Is(err, core.ErrInvalidLimit) {
					t.Errorf("Semaphore(%d) panicked with %v, want ErrInvalidLimit", limit, err)
				}
			}()
			l.Semaphore(limit)
		}()
	}
}

// A store that keeps permits says so, for a caller that refuses a
// configuration needing them at start-up.
func TestLockerKeepsPermits(t *testing.T) {
	if !newLocker(memorystore.New()).KeepsPermits() {
		t.Fatal("KeepsPermits over the memory store: false, want true")
	}
}

// A permit is a Lock: Do's context carries it, the watchdog renews it past
// its first lease, and an empty key is refused as for a lock.
func TestSemaphorePermitIsALock(t *testing.T) {
	const ttl = 100 * time.Millisecond
	sem := newLocker(memorystore.New(), core.WithTTL(ttl)).Semaphore(2)
	ctx := ctxT(t, 10*time.Second)
	if _, err := sem.TryObtain(ctx, ""); !errors.Is(err, core.ErrEmptyKey) {
		t.Fatalf("TryObtain of an empty key: %v, want ErrEmptyKey", err)
	}
	err := sem.Do(ctx, "k", func(ctx context.Context) error {
		lk, ok := core.FromContext(ctx)
		if !ok || lk.Key() != "k" || lk.Fence() == 0 {
			t.Fatalf("FromContext in Do: %v, %v", lk, ok)
		}
		time.Sleep(4 * ttl)
		if _, err := lk.TTL(ctx); err != nil || ctx.Err() != nil {
			t.Fatalf("after 4 leases under the watchdog: TTL %v, ctx %v", err, context.Cause(ctx))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
}

// A permit whose lease runs out unrenewed is lost: Lost fires, its
// context ends with ErrLockLost, its place goes to the next caller, and
// its release is refused.
func TestSemaphorePermitLost(t *testing.T) {
	const ttl = 100 * time.Millisecond
	sem := newLocker(memorystore.New(), core.WithTTL(ttl), core.WithoutWatchdog()).Semaphore(1)
	ctx := ctxT(t, 10*time.Second)
	lk, err := sem.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	lctx, cancel := lk.WithContext(ctx)
	defer cancel()
	select {
	case <-lk.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("Lost did not fire after the lease ran out")
	}
	if !errors.Is(context.Cause(lctx), core.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(lctx))
	}
	next, err := sem.Obtain(ctx, "k")
	if err != nil {
		t.Fatalf("the lost permit's place: %v", err)
	}
	defer next.Release(ctx)
	if err := lk.Release(ctx); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Release of the lost permit: %v, want ErrNotHeld", err)
	}
	if _, err := next.TTL(ctx); err != nil {
		t.Fatalf("the next holder's permit after the stale release: %v", err)
	}
}
