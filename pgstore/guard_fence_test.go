package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// A lock got by waiting in line holds the key under its wait's hand-off
// token, which every attempt of that wait carries. A late copy of one of
// those attempts, landing after the lease ran out and someone else took
// the key, puts the waiter in line again, and the next release hands it
// the key under that same token: Guard of the old lock must still say it
// is not held (the hand-off's fence is a new one), or its holder's write
// commits after the other holder's, under a stale fence.
func TestGuardRefusesAnOldLockUnderItsTokenHandedOnAgain(t *testing.T) {
	s, pool := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	holder := core.NewLocker(s, core.WithTTL(10*time.Second))
	first, err := holder.TryObtain(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	ttl := 300 * time.Millisecond
	waiter := core.NewLocker(s, core.WithTTL(ttl), core.WithoutWatchdog())
	got := make(chan *core.Lock, 1)
	go func() {
		lk, err := waiter.Obtain(ctx, "acct")
		if err != nil {
			t.Error(err)
		}
		got <- lk
	}()
	waitForLine(ctx, t, s, first.StoreKey())
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	old := <-got
	if old == nil {
		return
	}
	w, ok := strings.CutPrefix(old.Token(), "~")
	if !ok {
		t.Skipf("the waiter's lock is not held under its hand-off token: %q", old.Token())
	}
	time.Sleep(2 * ttl) // its lease runs out

	other, err := core.NewLocker(s, core.WithTTL(10*time.Second)).TryObtain(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	// The late copy of an attempt of the old wait: refused, it stands in line.
	late := store.Lease{Key: old.StoreKey(), Token: old.Token(), TTL: ttl}
	if _, _, err := s.AcquireQueued(ctx, late, w, false); !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("the late attempt: %v; want ErrNotObtained", err)
	}
	if err := other.Release(ctx); err != nil { // hands the key to the old waiter's name
		t.Fatal(err)
	}
	h, err := s.Inspect(ctx, old.StoreKey())
	if err != nil || !h.HandedOff {
		t.Fatalf("after the release: %+v, %v; want the key handed off", h, err)
	}

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if err := s.Guard(ctx, tx, old); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Guard of a lock whose token was handed on again (fence %d, handed %d): %v; want ErrNotHeld",
			old.Fence(), h.Fence, err)
	}
}
