package gocronlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/gocronlock"
	"github.com/reqlock/reqlock/memorystore"
)

// Unlock of a run whose lock was lost says so, and frees nothing of the
// instance that holds the key now.
func TestUnlockAfterTheLockWasLost(t *testing.T) {
	s := memorystore.New()
	a := gocronlock.NewLocker(core.NewLocker(s, core.WithTTL(50*time.Millisecond), core.WithoutWatchdog(), quiet))
	b := core.NewLocker(s, quiet)
	ctx := context.Background()
	lk, err := a.Lock(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the lease runs out unrenewed
	other, err := b.TryObtain(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release(ctx)
	if err := lk.Unlock(ctx); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Unlock after the loss = %v, want ErrNotHeld", err)
	}
	if h, err := b.Inspect(ctx, "job"); err != nil || !h.Held || h.Fence != other.Fence() {
		t.Fatalf("after the stale Unlock the key is %+v, %v; want still held by the new run", h, err)
	}
}
