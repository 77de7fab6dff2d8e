package redisstore_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// A waiter at the head of the line that died holds the key up for
// HandOffTimeout at most; one that leaves passes its turn on at once.
func TestDeadHeadOfLineIsBounded(t *testing.T) {
	c := redistest.Start(t).Client(t)
	st := redisstore.New(c)
	ctx := ctxT(t, 10*time.Second)
	key := "reqlock:{line}"
	if _, err := st.Acquire(ctx, store.Lease{Key: key, Token: "holder", TTL: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	for _, ghost := range []string{"dead", "leaving"} {
		if _, _, err := st.AcquireQueued(ctx, store.Lease{Key: key, Token: ghost + "-token", TTL: time.Second}, ghost, false); !errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("%s joins the line: %v", ghost, err)
		}
	}
	if err := st.Release(ctx, key, "holder"); err != nil {
		t.Fatal(err)
	}
	if v, left := c.Get(ctx, key).Val(), c.PTTL(ctx, key).Val(); v != "~dead" || left > store.HandOffTimeout {
		t.Fatalf("after the release the lock holds %q for %v, want a hand-off to the head for at most %v", v, left, store.HandOffTimeout)
	}
	// The dead waiter never claims it: the hand-off runs out, and the key
	// is free.
	lockertest.WaitFor(t, "the dead head's hand-off to run out", func() bool { return c.Exists(ctx, key).Val() == 0 })

	// The next holder releases to the one left in line, which leaves: the
	// lock goes on at once.
	if _, err := st.Acquire(ctx, store.Lease{Key: key, Token: "second", TTL: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := st.Release(ctx, key, "second"); err != nil {
		t.Fatal(err)
	}
	if v := c.Get(ctx, key).Val(); v != "~leaving" {
		t.Fatalf("lock holds %q, want a hand-off to the waiter still in line", v)
	}
	if err := st.Leave(ctx, key, "leaving"); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(ctx, key, key+":q").Val(); n != 0 {
		t.Fatalf("%d keys left after the last waiter left", n)
	}
}

// Thousands of waiters on many Lockers give up at once: every one answers,
// the line empties, and no goroutine is left behind.
func TestManyWaitersGiveUp(t *testing.T) {
	c := redistest.Start(t).Client(t)
	st := redisstore.New(c)
	ctx := ctxT(t, 20*time.Second)
	holder := newLocker(st)
	lk, err := holder.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)
	base := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for range 20 {
		l := newLocker(st)
		for range 100 {
			wg.Go(func() {
				wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
				// Taken, or (a waiter whose attempts the loaded store did
				// not answer in time) unavailable: either way, given up.
				_, err := l.Obtain(wctx, "k")
				if !errors.Is(err, context.DeadlineExceeded) ||
					!errors.Is(err, core.ErrNotObtained) && !errors.Is(err, core.ErrUnavailable) {
					t.Errorf("a waiter that gave up: %v", err)
				}
			})
		}
	}
	wg.Wait()
	skey, _ := holder.StoreKey("k")
	lockertest.WaitFor(t, "the line to empty", func() bool { return c.LLen(ctx, skey+":q").Val() == 0 })
	lockertest.WaitFor(t, "the waiters' goroutines to end", func() bool { return runtime.NumGoroutine() <= base+10 })
}
