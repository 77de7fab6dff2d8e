package lockertest

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// A release on one Locker wakes a waiter on another (an instance) at once:
// it takes the lock long before its first poll could have come.
func wakeAcrossLockers(t *testing.T, stores []Store) {
	Each(t, stores, func(t *testing.T, s core.Store, _ func(string)) {
		ctx := Context(t, 10*time.Second)
		holder, waiter := NewLocker(s), NewLocker(s)
		for round := range 3 {
			lk, err := holder.TryObtain(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			if d := HandOff(t, ctx, lk, waiter); d >= store.HandOffTimeout/4 {
				t.Fatalf("round %d: the waiter took the lock %v after the release: not woken", round, d)
			}
		}
	})
}

// HandOff has waiter wait for lk's key, releases lk once the waiter is in
// line, and returns how long after the release the waiter had the lock. A
// poll comes HandOffTimeout/4 after the waiter's last attempt at the
// earliest; a wake-up well before that.
func HandOff(t *testing.T, ctx context.Context, lk *core.Lock, waiter *core.Locker) time.Duration {
	t.Helper()
	got := make(chan time.Time, 1)
	go func() {
		next, err := waiter.Obtain(ctx, lk.Key())
		at := time.Now()
		if err == nil {
			_ = next.Release(ctx)
		}
		got <- at
	}()
	time.Sleep(30 * time.Millisecond) // the waiter is listening and in line
	released := time.Now()
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	return (<-got).Sub(released)
}
